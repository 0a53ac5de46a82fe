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
