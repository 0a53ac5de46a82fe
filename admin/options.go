package admin

import (
	"log/slog"

	"github.com/gatewaykit/gatewaykit/internal/quietlog"
	"github.com/gatewaykit/gatewaykit/models"
)

// An Option configures the handler of [NewHandler].
type Option func(*config)

type config struct {
	adminKey string
	logger   *slog.Logger
	maxBytes int64
	catalog  models.Catalog
	sessions *Sessions
}

// DefaultMaxRequestBytes is the largest request body the handler reads
// when [WithMaxRequestBytes] sets no other limit: 64 KiB.
const DefaultMaxRequestBytes = 64 << 10

func newConfig(opts []Option) config {
	c := config{logger: quietlog.Discard, maxBytes: DefaultMaxRequestBytes}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithAdminKey sets the admin key: the secret that every request but a
// CORS preflight must send as "Authorization: Bearer <key>". It is
// required ([NewHandler] panics without it), compared in constant time,
// and never logged. Use a random secret of at least 128 bits.
func WithAdminKey(key string) Option {
	return func(c *config) { c.adminKey = key }
}

// WithLogger sets the logger that errors are logged to (client errors at
// debug level, server errors with their cause at error level). Default:
// nothing is logged; nil restores that.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = quietlog.Or(l) }
}

// WithMaxRequestBytes sets the largest request body read; a larger one
// is a 400. Default [DefaultMaxRequestBytes]; n ≤ 0 restores it.
func WithMaxRequestBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			n = DefaultMaxRequestBytes
		}
		c.maxBytes = n
	}
}

// WithSessions mounts POST /admin/v1/sessions, which mints the admin
// console's sessions of s for an account (see [Sessions]). By default, and
// for nil, the route is not mounted (404).
func WithSessions(s *Sessions) Option {
	return func(c *config) { c.sessions = s }
}

// WithCatalog makes the handler check that every model of a key's
// allowed_models is in catalog (400 with param "allowed_models[i]"
// otherwise). Default: no check; nil restores that.
func WithCatalog(catalog models.Catalog) Option {
	return func(c *config) { c.catalog = catalog }
}
