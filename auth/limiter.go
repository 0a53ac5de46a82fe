package auth

import (
	"context"
	"strconv"
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
