package responses

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// An Option configures [NewHandler].
type Option func(*config)

type config struct {
	pipeline.Config
	store Store
	owner OwnerFunc
}

func newConfig(opts []Option) config {
	c := config{Config: pipeline.Defaults(), owner: PrincipalOwner}
	for _, o := range opts {
		o(&c)
	}
	c.Finish()
	if c.store == nil {
		c.store = NewMemoryStore(nil)
	}
	return c
}

// WithLogger sets the logger of the handler: client errors are logged at
// debug level, server errors at error level, and failed usage charges and
// failed store writes at error level. By default, and when l is nil,
// nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.SetLogger(l) }
}

// WithMaxRequestBytes sets the largest request body accepted; a larger one
// is answered with a 400 invalid_request_error that names the limit. The
// default is 8 MiB (room for a long conversation and an image or two
// sent as data URIs; the video endpoints keep 32 MiB); n ≤ 0 restores it.
func WithMaxRequestBytes(n int64) Option {
	return func(c *config) { c.SetMaxBytes(n) }
}

// WithValidator sets the validator that checks requests against the
// validate tags of [Request] and [CompactRequest], for example one with
// extra struct-level rules registered. It must report fields by their
// JSON names (RegisterTagNameFunc) so that errors carry the right param.
// By default each handler builds its own, once, at construction, and
// shows it only the requests that a reflection-free check of the same
// tags finds at fault, so that it writes their error messages. nil
// restores the default.
func WithValidator(v *validator.Validate) Option {
	return func(c *config) { c.SetValidator(v) }
}

// WithAllowed sets the check of which models the caller may use. A model
// it rejects is answered 404 model_not_found, as if it did not exist. By
// default a request may use the models its API key allows
// ([auth.Principal.AllowsModel]; every model for a request without a
// principal). nil allows every model.
func WithAllowed(allow models.AllowFunc) Option {
	return func(c *config) { c.Allow = allow }
}

// WithKeepAlive sets the interval of silence after which a stream writes
// a ": keep-alive" comment line, so that proxies do not cut a slow stream.
// The default is [sse.DefaultKeepAlive] (15s); 0 disables the comments.
// WithKeepAlive panics if d is negative.
func WithKeepAlive(d time.Duration) Option {
	pipeline.CheckKeepAlive("responses", d)
	return func(c *config) { c.KeepAlive = d }
}

// WithErrorHook sets a function called with every error the handler sends
// to a client, as the client sees it, before it is sent (for metrics, for
// example), including the error of a response.failed event; the error's
// cause, in Err, is not sent. It is not called when the client has gone.
// It must be safe for concurrent use and must not modify the error. By
// default there is none.
func WithErrorHook(hook func(r *http.Request, err *apierrors.Error)) Option {
	return func(c *config) { c.ErrorHook = hook }
}

// WithClock sets the clock that stamps responses (created_at,
// completed_at). The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.SetClock(now) }
}

// WithStore sets the store that keeps responses for GET and DELETE
// /v1/responses/{id} and for previous_response_id. By default each
// handler has its own [MemoryStore] with the default bounds
// (NewMemoryStore(nil)): responses live as long as the process, and two
// handlers do not share them. Use a shared, persistent Store to run
// several gateway instances. nil restores the default.
func WithStore(s Store) Option {
	return func(c *config) { c.store = s }
}

// An OwnerFunc returns the owner that scopes the stored responses of a
// request: a response is visible only to requests with the owner of the
// request that created it.
type OwnerFunc func(ctx context.Context) string

// WithOwner sets how the owner of a request's responses is found. The
// default is [PrincipalOwner]; nil restores it.
func WithOwner(f OwnerFunc) Option {
	return func(c *config) {
		if f == nil {
			f = PrincipalOwner
		}
		c.owner = f
	}
}

// PrincipalOwner is the default [OwnerFunc]: the account of the request's
// API key ("owner:" + [auth.Principal] Owner), or the key itself ("key:" +
// KeyID) when the key names no account. A request without a principal
// (a handler not behind auth.Middleware) has the empty owner: its
// responses are visible to every such request, and to none that has a
// principal.
func PrincipalOwner(ctx context.Context) string {
	p, ok := auth.PrincipalFrom(ctx)
	switch {
	case !ok:
		return ""
	case p.Owner != "":
		return "owner:" + p.Owner
	}
	return "key:" + p.KeyID
}
