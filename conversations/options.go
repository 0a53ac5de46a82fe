package conversations

import (
	"log/slog"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/quietlog"
)

// An Option configures [NewHandler].
type Option func(*config)

type config struct {
	logger   *slog.Logger
	maxBytes int64
	owner    auth.OwnerFunc
	now      func() time.Time
}

func newConfig(opts []Option) *config {
	c := &config{logger: quietlog.Discard, maxBytes: httpjson.DefaultTextMaxBytes, owner: auth.AccountOwner, now: time.Now}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithLogger sets the logger that errors are logged to: client errors at
// debug level, server errors (a store that fails) at error level. By
// default, and when l is nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = quietlog.Or(l) }
}

// WithMaxRequestBytes sets the largest request body accepted; a larger one
// is answered with a 400 invalid_request_error that names the limit. The
// default is 8 MiB, as for POST /v1/responses, whose input items a
// conversation holds; n ≤ 0 restores it.
func WithMaxRequestBytes(n int64) Option {
	return func(c *config) {
		if n <= 0 {
			n = httpjson.DefaultTextMaxBytes
		}
		c.maxBytes = n
	}
}

// WithOwner sets how the owner that scopes a request's conversations is
// found (auth.OwnerFunc): a conversation is visible only to requests with
// the owner of the request that created it. Give the responses handler
// the same one (responses.WithOwner), so that the "conversation" of POST
// /v1/responses finds the same conversations. The default is
// auth.AccountOwner (by account; auth.KeyOwner scopes by key), as in
// package responses; nil restores it.
func WithOwner(f auth.OwnerFunc) Option {
	return func(c *config) {
		if f == nil {
			f = auth.AccountOwner
		}
		c.owner = f
	}
}

// WithClock sets the clock of the conversations' created_at. The default
// is time.Now; nil restores it.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now == nil {
			now = time.Now
		}
		c.now = now
	}
}
