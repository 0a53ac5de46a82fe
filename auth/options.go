package auth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/quietlog"
)

// Option configures [Middleware].
type Option func(*config)

type config struct {
	logger         *slog.Logger
	limiter        Limiter
	defaultLimit   Limit
	authenticators []Authenticator // nil: APIKeys of the middleware's store
	sessions       SessionAuthenticator
	errorShape     func(*http.Request) apierrors.Shape
	observeKey     func(w http.ResponseWriter, r *http.Request, keyID string)
	spends         func(*http.Request) bool

	limiterFailure LimiterFailure
	observeLimiter func(ctx context.Context, err error)
	// limiterLog holds when the next line about a failing limiter may
	// be logged (Unix nanoseconds) and the failures since the last one.
	limiterLog struct {
		next   atomic.Int64
		missed atomic.Int64
	}
}

// newConfig returns the configuration of a middleware over keys.
func newConfig(keys KeyStore, opts []Option) *config {
	c := &config{
		logger: quietlog.Discard,
		spends: Spends,
	}
	for _, o := range opts {
		o(c)
	}
	if c.limiter == nil {
		c.limiter = NewMemoryLimiter(nil)
	}
	if c.authenticators == nil {
		c.authenticators = []Authenticator{&keyAuthenticator{keys: keys}}
	}
	if c.sessions != nil {
		c.authenticators = append(c.authenticators[:len(c.authenticators):len(c.authenticators)], sessions{c.sessions})
	}
	return c
}

// WithLogger sets the logger for refused requests (through
// apierrors.Renderer, client errors at debug level) and authenticated
// ones (debug level, key id and credential kind). Secrets are never
// logged. By default, and for nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = quietlog.Or(l) }
}

// WithLimiter sets the [Limiter] that enforces rate limits. By default,
// and for nil, each Middleware has its own [MemoryLimiter].
func WithLimiter(l Limiter) Option {
	return func(c *config) { c.limiter = l }
}

// WithDefaultRateLimit sets the rate limit of keys whose Key.RateLimit is
// nil, and of the principals of other authenticators (sessions among
// them) whose RateLimit is the zero Limit. By default there is none: only keys
// with their own limit are rate-limited. A Limit with Requests ≤ 0 means
// no default limit.
func WithDefaultRateLimit(l Limit) Option {
	return func(c *config) { c.defaultLimit = l }
}

// WithAuthenticators sets the authenticators of the middleware, asked in
// their order (see [Authenticator]): for example an embedder's own
// identity before API keys,
//
//	auth.WithAuthenticators(auth.Identities(keys, sessionUser), auth.APIKeys(keys))
//
// or an embedder's own authenticators in place of API keys. Each
// principal is charged to the store that its authenticator names
// ([Principal].Keys), which need not be the middleware's. By default, and
// when called with none, the middleware has one authenticator:
// [APIKeys] of the KeyStore given to [Middleware]. A session
// authenticator ([WithSessionAuthenticator]) is asked after them all.
// WithAuthenticators panics if one of a is nil.
func WithAuthenticators(a ...Authenticator) Option {
	if slices.Contains(a, nil) {
		panic("auth: WithAuthenticators: nil Authenticator")
	}
	list := slices.Clone(a)
	return func(c *config) {
		c.authenticators = nil
		if len(list) > 0 {
			c.authenticators = list
		}
	}
}

// WithSessionAuthenticator makes the middleware accept a session from sa
// when none of its authenticators finds a credential in a request (an
// invalid API key is refused without asking sa): sa is asked last. By
// default, and for nil, sessions are not accepted. Mount a separate
// Middleware with this option on the routes that take sessions, such as
// the video content endpoint.
func WithSessionAuthenticator(sa SessionAuthenticator) Option {
	return func(c *config) { c.sessions = sa }
}

// WithErrorShape sets the function that picks, per request, the wire shape
// in which the middleware renders its refusals (401, 403, 429 and 5xx), so
// that clients of another format get errors they can parse: for example
// apierrors.ShapeFor, which answers the messages-format and Gemini-style
// paths in their own shapes. Status codes and headers
// (WWW-Authenticate, Retry-After, x-ratelimit-*) are the same in every
// shape. By default, and for nil, every refusal is in the general shape.
func WithErrorShape(shape func(r *http.Request) apierrors.Shape) Option {
	return func(c *config) { c.errorShape = shape }
}

// WithKeyObserver sets a function that the middleware calls, once per
// request, with the id of the key (or the KeyID of the principal of
// another authenticator: a session's, an identity's) that the request's
// credential resolved to, before it checks expiry, the
// disabled flag, quota and rate limit: so it is called for requests that
// are then refused (401 for an expired or disabled key, 403, 429) as
// well as for those that proceed, and never for an unknown or malformed
// credential. It receives the request's ResponseWriter, so that an access
// log wrapped around the middleware can name the key of a refused
// request, which never reaches a handler. It runs on the request's
// goroutine, before anything is written; it must not write to w. The
// secret is never passed. By default, and for nil, nothing is called.
func WithKeyObserver(fn func(w http.ResponseWriter, r *http.Request, keyID string)) Option {
	return func(c *config) { c.observeKey = fn }
}

// WithSpending sets the function that tells which requests spend quota:
// the middleware refuses a key whose quota is exhausted, or whose cost
// reached its budget in money, with 403 insufficient_quota on those
// requests only, and lets it read and delete what it already owns. By
// default, and for nil, [Spends].
func WithSpending(spends func(r *http.Request) bool) Option {
	return func(c *config) {
		if spends == nil {
			spends = Spends
		}
		c.spends = spends
	}
}

// Spends is the default of [WithSpending]: a request spends quota unless
// its method is GET, HEAD, OPTIONS or DELETE, which read or remove what
// a key already owns, or it cancels a background response (POST
// /v1/responses/{id}/cancel), which stops spending. In the kit every
// other POST route generates or creates
// something (chat, completions, responses and their compaction, the
// messages format, generateContent, embeddings, moderations, rerank,
// images, audio, video creation, conversations, their metadata and
// items), and no other route does (the model list, a video task's status
// and content, the task list, a stored response and its input items, a
// conversation and its items, deletions).
func Spends(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodDelete:
		return false
	}
	// Cancelling a background response stops spending.
	return !(strings.HasPrefix(r.URL.Path, "/v1/responses/") && strings.HasSuffix(r.URL.Path, "/cancel"))
}

// LimiterFailure is what the middleware does with a request when its
// [Limiter] fails (Redis cannot be reached, say): the zero value is
// [FailOpen]. As text (flags, configuration) it is "open" or "closed".
type LimiterFailure uint8

const (
	// FailOpen serves the request as if it had no rate limit, without the
	// x-ratelimit headers: an outage of the limiter lifts rate limits for
	// its duration rather than take the gateway down with it. Quota and
	// budgets are still enforced by the KeyStore.
	FailOpen LimiterFailure = iota
	// FailClosed refuses the request with 503 service_unavailable and
	// Retry-After (apierrors.Unavailable), in the request's error shape.
	FailClosed
)

// String returns "open" or "closed".
func (f LimiterFailure) String() string {
	if f == FailClosed {
		return "closed"
	}
	return "open"
}

// MarshalText returns [LimiterFailure.String].
func (f LimiterFailure) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads "open" or "closed"; anything else is an error
// naming the text.
func (f *LimiterFailure) UnmarshalText(text []byte) error {
	switch string(text) {
	case "open":
		*f = FailOpen
	case "closed":
		*f = FailClosed
	default:
		return fmt.Errorf("auth: limiter failure %q: want open or closed", text)
	}
	return nil
}

// WithLimiterFailure sets what the middleware does with a request when
// its Limiter returns an error (other than the request's own cancellation
// or deadline). By default, [FailOpen]: the request is served without a
// rate limit, and the failure is logged at error level at most once every
// 10 seconds, with the number of failures since the last line. With
// [FailClosed], the request is refused with 503 service_unavailable and
// Retry-After, logged as every 5xx is.
func WithLimiterFailure(f LimiterFailure) Option {
	return func(c *config) { c.limiterFailure = f }
}

// WithLimiterErrorObserver sets a function that the middleware calls with
// every error of its Limiter that it fails open or closed on (see
// [WithLimiterFailure]), on the request's goroutine, for a metric: it
// must be safe for concurrent use and must not block. By default, and
// for nil, nothing is called.
func WithLimiterErrorObserver(fn func(ctx context.Context, err error)) Option {
	return func(c *config) { c.observeLimiter = fn }
}
