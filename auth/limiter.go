package auth

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limit is a request rate: Requests per Period, enforced as a token
// bucket that holds at most Requests tokens and refills one token every
// Period/Requests. A client may therefore send Requests requests at once,
// then one every Period/Requests.
//
// A Limit with Requests ≤ 0 (the zero Limit among them) means no limit.
type Limit struct {
	Requests int
	// Period is the window of Requests; ≤ 0 means one minute, so that
	// Requests reads as requests per minute, the unit of OpenAI's
	// x-ratelimit-limit-requests.
	Period time.Duration
}

// PerMinute returns a limit of n requests per minute.
func PerMinute(n int) Limit { return Limit{Requests: n, Period: time.Minute} }

// Unlimited reports whether l imposes no limit.
func (l Limit) Unlimited() bool { return l.Requests <= 0 }

// Window returns l's Period, or one minute if it is not positive.
func (l Limit) Window() time.Duration {
	if l.Period <= 0 {
		return time.Minute
	}
	return l.Period
}

// String returns "unlimited" or "<requests>/<period>", e.g. "60/1m0s".
func (l Limit) String() string {
	if l.Unlimited() {
		return "unlimited"
	}
	return strconv.Itoa(l.Requests) + "/" + l.Window().String()
}

// ParseLimit reads a limit in the text form of configuration files and
// flags: "<requests>/<period>", where the period is a unit (s, m or h,
// for one second, minute or hour) or a Go duration ("10s", "1m0s", as
// [Limit.String] writes it); or "unlimited" for no limit. For example
// "5/s", "600/m", "100/10s". Requests must be a positive integer and the
// period positive; anything else is an error naming the text.
func ParseLimit(s string) (Limit, error) {
	if s == "unlimited" {
		return Limit{}, nil
	}
	n, period, ok := strings.Cut(s, "/")
	if !ok {
		return Limit{}, fmt.Errorf("auth: rate limit %q: want <requests>/<period>, such as 5/s or 600/m, or unlimited", s)
	}
	requests, err := strconv.Atoi(n)
	if err != nil || requests <= 0 {
		return Limit{}, fmt.Errorf("auth: rate limit %q: the number of requests must be a positive integer", s)
	}
	var d time.Duration
	switch period {
	case "s":
		d = time.Second
	case "m":
		d = time.Minute
	case "h":
		d = time.Hour
	default:
		d, err = time.ParseDuration(period)
		if err != nil || d <= 0 {
			return Limit{}, fmt.Errorf("auth: rate limit %q: the period must be s, m, h or a positive duration such as 10s", s)
		}
	}
	return Limit{Requests: requests, Period: d}, nil
}

// MarshalText returns the text of l that [ParseLimit] reads back:
// "unlimited" or [Limit.String]'s "<requests>/<period>". With
// UnmarshalText, it makes a Limit a JSON string and a flag.TextVar.
func (l Limit) MarshalText() ([]byte, error) {
	return []byte(l.String()), nil
}

// UnmarshalText sets l from text with [ParseLimit].
func (l *Limit) UnmarshalText(text []byte) error {
	v, err := ParseLimit(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// Decision is a [Limiter]'s answer for one request. The middleware sends
// it as the x-ratelimit-*-requests headers.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the limit's Requests (x-ratelimit-limit-requests).
	Limit int
	// Remaining is how many more requests would be allowed right now
	// (x-ratelimit-remaining-requests).
	Remaining int
	// Reset is the time until the bucket is full again
	// (x-ratelimit-reset-requests).
	Reset time.Duration
	// RetryAfter, for a request not allowed, is the time until the next
	// request will be (Retry-After).
	RetryAfter time.Duration
}

// A Limiter enforces per-key request rate limits. Implementations must be
// safe for concurrent use; concurrent calls for one key must never allow
// more requests than the limit. keyID identifies the bucket (the key id,
// or "session:" + the principal's KeyID for sessions). An unlimited limit
// is always allowed; the middleware does not call Allow with one.
//
// The limit of one key may change between calls (a key's RateLimit was
// edited); Decision.Limit always reports the limit passed in.
//
// The conformance suite authtest.TestLimiter checks this contract.
type Limiter interface {
	Allow(ctx context.Context, keyID string, limit Limit) (Decision, error)
}
