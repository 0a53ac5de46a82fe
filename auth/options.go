package auth

import (
	"log/slog"
	"net/http"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// Option configures [Middleware].
type Option func(*config)

type config struct {
	logger       *slog.Logger
	limiter      Limiter
	defaultLimit Limit
	sessions     SessionAuthenticator
	now          func() time.Time
	errorShape   func(*http.Request) apierrors.Shape
	observeKey   func(w http.ResponseWriter, r *http.Request, keyID string)
}

func newConfig(opts []Option) *config {
	c := &config{
		logger: slog.New(slog.DiscardHandler),
		now:    time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	if c.limiter == nil {
		c.limiter = NewMemoryLimiter(&MemoryLimiterOptions{Now: c.now})
	}
	return c
}

// WithLogger sets the logger for refused requests (through
// apierrors.Renderer, client errors at debug level) and authenticated
// ones (debug level, key id and credential kind). Secrets are never
// logged. By default, and for nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
	}
}

// WithLimiter sets the [Limiter] that enforces rate limits. By default,
// and for nil, each Middleware has its own [MemoryLimiter] reading the
// clock of [WithClock].
func WithLimiter(l Limiter) Option {
	return func(c *config) { c.limiter = l }
}

// WithDefaultRateLimit sets the rate limit of keys whose Key.RateLimit is
// nil, and of sessions that set none. By default there is none: only keys
// with their own limit are rate-limited. A Limit with Requests ≤ 0 means
// no default limit.
func WithDefaultRateLimit(l Limit) Option {
	return func(c *config) { c.defaultLimit = l }
}

// WithSessionAuthenticator makes the middleware accept a session from sa
// when a request carries no API key at all (an invalid API key is refused
// without asking sa). By default, and for nil, sessions are not accepted.
// Mount a separate Middleware with this option on the routes that take
// sessions, such as the video content endpoint.
func WithSessionAuthenticator(sa SessionAuthenticator) Option {
	return func(c *config) { c.sessions = sa }
}

// WithClock sets the clock used for key expiry and by the default
// limiter, for tests. By default, and for nil, time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			now = time.Now
		}
		c.now = now
	}
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
// request, with the id of the key (or the session's KeyID) that the
// request's credential resolved to, before it checks expiry, the
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
