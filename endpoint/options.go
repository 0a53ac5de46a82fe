package endpoint

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-playground/validator/v10"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// An Option configures the handler of an endpoint package: the
// NewHandler of [chat], [completions] and [responses] all take Options,
// and an option means the same thing in each (as in the handlers of the
// other access points, packages embeddings, moderations, rerank, images
// and audio, which take the options that apply to them). The options of this
// package apply to all three; a package may add options of its own
// (responses.WithStore, say), which the other packages ignore. Options
// are made only by this module's packages.
//
// [chat]: https://pkg.go.dev/github.com/gatewaykit/gatewaykit/chat
// [completions]: https://pkg.go.dev/github.com/gatewaykit/gatewaykit/completions
// [responses]: https://pkg.go.dev/github.com/gatewaykit/gatewaykit/responses
type Option func(*pipeline.Config)

// WithLogger sets the logger of the handler: client errors are logged at
// debug level, server errors at error level, and failed usage charges
// (and, in package responses, failed store writes) at error level. By
// default, and when l is nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *pipeline.Config) { c.SetLogger(l) }
}

// WithMaxRequestBytes sets the largest request body accepted; a larger one
// is answered with a 400 invalid_request_error that names the limit. The
// default is 8 MiB (room for a long conversation and an image or two
// sent as data URIs; the video endpoints keep 32 MiB); n ≤ 0 restores it.
func WithMaxRequestBytes(n int64) Option {
	return func(c *pipeline.Config) { c.SetMaxBytes(n) }
}

// WithValidator sets a validator with rules of its own (struct-level
// ones, registered on it) that every request goes through once the
// handler's own checks pass. The handlers check the rules of the API in
// plain Go (their request types carry no validate tags); this adds
// yours. It must report fields by their JSON names (RegisterTagNameFunc)
// so that errors carry the right param; the handler uses it as it is. By default there is none; nil
// restores that.
func WithValidator(v *validator.Validate) Option {
	return func(c *pipeline.Config) { c.SetValidator(v) }
}

// WithAllowed sets the check of which models the caller may use. A model
// it rejects is answered 404 model_not_found, as if it did not exist. By
// default a request may use the models its API key allows
// ([auth.Principal.AllowsModel]; every model for a request without a
// principal). nil allows every model.
//
// [auth.Principal.AllowsModel]: https://pkg.go.dev/github.com/gatewaykit/gatewaykit/auth#Principal.AllowsModel
func WithAllowed(allow models.AllowFunc) Option {
	return func(c *pipeline.Config) { c.Allow = allow }
}

// WithKeepAlive sets the interval of silence after which a stream writes
// a ": keep-alive" comment line, so that proxies do not cut a slow stream.
// The default is sse.DefaultKeepAlive (15s); 0 disables the comments.
// WithKeepAlive panics if d is negative.
func WithKeepAlive(d time.Duration) Option {
	if d < 0 {
		panic("endpoint: WithKeepAlive: negative interval")
	}
	return func(c *pipeline.Config) { c.KeepAlive = d }
}

// WithErrorHook sets a function called with every error the handler sends
// to a client, as the client sees it, before it is sent (for metrics, for
// example), including the error of a stream's error event (in package
// responses, of its response.failed event); the error's cause, in Err, is
// not sent. It is not called when the client has gone. It must be safe
// for concurrent use and must not modify the error. By default there is
// none.
func WithErrorHook(hook func(r *http.Request, err *apierrors.Error)) Option {
	return func(c *pipeline.Config) { c.ErrorHook = hook }
}

// WithClock sets the clock that stamps replies ("created"; in package
// responses, created_at and completed_at). The default is time.Now; nil
// restores it.
func WithClock(now func() time.Time) Option {
	return func(c *pipeline.Config) { c.SetClock(now) }
}
