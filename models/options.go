package models

import (
	"log/slog"

	"github.com/gatewaykit/gatewaykit/internal/quietlog"
)

// An Option configures [NewHandler].
type Option func(*config)

type config struct {
	logger *slog.Logger
	allow  AllowFunc
}

func newConfig(opts []Option) *config {
	cfg := &config{logger: quietlog.Discard}
	for _, o := range opts {
		o(cfg)
	}
	return cfg
}

// WithLogger sets the logger that errors are logged to (client errors at
// debug level, server errors at error level). By default, and when l is
// nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = quietlog.Or(l) }
}

// WithAllowed sets the check of which models the caller may see. Models it
// rejects are left out of every list and answer 404 model_not_found on the
// single-model routes. By default, and when allow is nil, every model is
// visible. Pass the same [AllowFunc] to [Require] in the generation
// handlers, so that the list and the check agree.
func WithAllowed(allow AllowFunc) Option {
	return func(c *config) { c.allow = allow }
}
