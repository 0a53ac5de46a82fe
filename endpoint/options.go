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

// setter is what an option of this package does to the configuration
// common to the endpoint packages.
type setter func(*pipeline.Config)

// apply applies s to t's common configuration; a nil s (the zero value
// of an option type) changes nothing.
func (s setter) apply(t pipeline.Target) {
	if s != nil {
		s(t.Common())
	}
}

// An Option is an option of the handler of every endpoint package (chat,
// completions, responses, messages, gemini, embeddings, moderations,
// rerank, images and audio): it has the method of each package's Option,
// and means the same thing in each. Options are made by the functions of
// this package; the zero Option changes nothing.
type Option struct{ set setter }

// A ValidatorOption is an option of the handlers whose requests go
// through a validator ([WithValidator]): those of chat, completions,
// responses, embeddings, moderations, rerank, images and audio (not
// messages and gemini, which check their formats' rules themselves and
// run no validator of yours).
type ValidatorOption struct{ set setter }

// A StreamOption is an option of the handlers that stream their replies
// ([WithKeepAlive]): those of chat, completions, responses, messages and
// gemini.
type StreamOption struct{ set setter }

// A ClockOption is an option of the handlers whose replies carry a time
// ([WithClock]): those of chat, completions, responses and images.
type ClockOption struct{ set setter }

// WithLogger sets the logger of the handler: client errors are logged at
// debug level, server errors at error level, and failed usage charges
// (and, in package responses, failed store writes) at error level. By
// default, and when l is nil, nothing is logged. Every endpoint package
// takes it.
func WithLogger(l *slog.Logger) Option {
	return Option{func(c *pipeline.Config) { c.SetLogger(l) }}
}

// WithMaxRequestBytes sets the largest request body accepted; a larger one
// is answered with a 400 invalid_request_error that names the limit. The
// default is 8 MiB (room for a long conversation and an image or two
// sent as data URIs), 25 MiB in package audio; n ≤ 0 restores 8 MiB.
// Every endpoint package takes it. (The video endpoints, 32 MiB by
// default, have their own videos.WithMaxRequestBytes.)
func WithMaxRequestBytes(n int64) Option {
	return Option{func(c *pipeline.Config) { c.SetMaxBytes(n) }}
}

// WithValidator sets a validator with rules of its own (struct-level
// ones, registered on it) that every request goes through once the
// handler's own checks pass. The handlers check the rules of the API in
// plain Go (their request types carry no validate tags); this adds
// yours. It must report fields by their JSON names (RegisterTagNameFunc)
// so that errors carry the right param; the handler uses it as it is. By
// default there is none; nil restores that. The packages whose requests
// go through it take it ([ValidatorOption]): chat, completions,
// responses, embeddings, moderations, rerank, images and audio.
func WithValidator(v *validator.Validate) ValidatorOption {
	return ValidatorOption{func(c *pipeline.Config) { c.SetValidator(v) }}
}

// WithAllowed sets the check of which models the caller may use. A model
// it rejects is answered 404 model_not_found, as if it did not exist. By
// default a request may use the models its API key allows
// ([auth.Principal.AllowsModel]; every model for a request without a
// principal). nil allows every model. Every endpoint package takes it.
//
// [auth.Principal.AllowsModel]: https://pkg.go.dev/github.com/gatewaykit/gatewaykit/auth#Principal.AllowsModel
func WithAllowed(allow models.AllowFunc) Option {
	return Option{func(c *pipeline.Config) { c.Allow = allow }}
}

// WithKeepAlive sets the interval of silence after which a stream writes
// a ": keep-alive" comment line, so that proxies do not cut a slow stream.
// The default is sse.DefaultKeepAlive (15s); 0 disables the comments.
// WithKeepAlive panics if d is negative. The packages that stream take
// it ([StreamOption]): chat, completions, responses, messages and gemini.
func WithKeepAlive(d time.Duration) StreamOption {
	if d < 0 {
		panic("endpoint: WithKeepAlive: negative interval")
	}
	return StreamOption{func(c *pipeline.Config) { c.KeepAlive = d }}
}

// WithErrorHook sets a function called with every error the handler sends
// to a client, as the client sees it, before it is sent (for metrics, for
// example), including the error of a stream's error event (in package
// responses, of its response.failed event); the error's cause, in Err, is
// not sent. It is not called when the client has gone. It must be safe
// for concurrent use and must not modify the error. By default there is
// none. Every endpoint package takes it.
func WithErrorHook(hook func(r *http.Request, err *apierrors.Error)) Option {
	return Option{func(c *pipeline.Config) { c.ErrorHook = hook }}
}

// WithClock sets the clock that stamps replies ("created"; in package
// responses, created_at and completed_at; in package images, created and
// the expiry of its URLs). The default is time.Now; nil restores it. The
// packages whose replies carry a time take it ([ClockOption]): chat,
// completions, responses and images.
func WithClock(now func() time.Time) ClockOption {
	return ClockOption{func(c *pipeline.Config) { c.SetClock(now) }}
}

// The methods below make the options of this package the options of the
// endpoint packages that take them.

// ApplyToChat makes o a chat.Option; chat.NewHandler calls it.
func (o Option) ApplyToChat(t pipeline.Target) { o.set.apply(t) }

// ApplyToCompletions makes o a completions.Option; completions.NewHandler calls it.
func (o Option) ApplyToCompletions(t pipeline.Target) { o.set.apply(t) }

// ApplyToResponses makes o a responses.Option; responses.NewHandler calls it.
func (o Option) ApplyToResponses(t pipeline.Target) { o.set.apply(t) }

// ApplyToMessages makes o a messages.Option; messages.NewHandler calls it.
func (o Option) ApplyToMessages(t pipeline.Target) { o.set.apply(t) }

// ApplyToGemini makes o a gemini.Option; gemini.NewHandler calls it.
func (o Option) ApplyToGemini(t pipeline.Target) { o.set.apply(t) }

// ApplyToEmbeddings makes o a embeddings.Option; embeddings.NewHandler calls it.
func (o Option) ApplyToEmbeddings(t pipeline.Target) { o.set.apply(t) }

// ApplyToModerations makes o a moderations.Option; moderations.NewHandler calls it.
func (o Option) ApplyToModerations(t pipeline.Target) { o.set.apply(t) }

// ApplyToRerank makes o a rerank.Option; rerank.NewHandler calls it.
func (o Option) ApplyToRerank(t pipeline.Target) { o.set.apply(t) }

// ApplyToImages makes o a images.Option; images.NewHandler calls it.
func (o Option) ApplyToImages(t pipeline.Target) { o.set.apply(t) }

// ApplyToAudio makes o a audio.Option; audio.NewHandler calls it.
func (o Option) ApplyToAudio(t pipeline.Target) { o.set.apply(t) }

// ApplyToChat makes o a chat.Option; chat.NewHandler calls it.
func (o ValidatorOption) ApplyToChat(t pipeline.Target) { o.set.apply(t) }

// ApplyToCompletions makes o a completions.Option; completions.NewHandler calls it.
func (o ValidatorOption) ApplyToCompletions(t pipeline.Target) { o.set.apply(t) }

// ApplyToResponses makes o a responses.Option; responses.NewHandler calls it.
func (o ValidatorOption) ApplyToResponses(t pipeline.Target) { o.set.apply(t) }

// ApplyToEmbeddings makes o a embeddings.Option; embeddings.NewHandler calls it.
func (o ValidatorOption) ApplyToEmbeddings(t pipeline.Target) { o.set.apply(t) }

// ApplyToModerations makes o a moderations.Option; moderations.NewHandler calls it.
func (o ValidatorOption) ApplyToModerations(t pipeline.Target) { o.set.apply(t) }

// ApplyToRerank makes o a rerank.Option; rerank.NewHandler calls it.
func (o ValidatorOption) ApplyToRerank(t pipeline.Target) { o.set.apply(t) }

// ApplyToImages makes o a images.Option; images.NewHandler calls it.
func (o ValidatorOption) ApplyToImages(t pipeline.Target) { o.set.apply(t) }

// ApplyToAudio makes o a audio.Option; audio.NewHandler calls it.
func (o ValidatorOption) ApplyToAudio(t pipeline.Target) { o.set.apply(t) }

// ApplyToChat makes o a chat.Option; chat.NewHandler calls it.
func (o StreamOption) ApplyToChat(t pipeline.Target) { o.set.apply(t) }

// ApplyToCompletions makes o a completions.Option; completions.NewHandler calls it.
func (o StreamOption) ApplyToCompletions(t pipeline.Target) { o.set.apply(t) }

// ApplyToResponses makes o a responses.Option; responses.NewHandler calls it.
func (o StreamOption) ApplyToResponses(t pipeline.Target) { o.set.apply(t) }

// ApplyToMessages makes o a messages.Option; messages.NewHandler calls it.
func (o StreamOption) ApplyToMessages(t pipeline.Target) { o.set.apply(t) }

// ApplyToGemini makes o a gemini.Option; gemini.NewHandler calls it.
func (o StreamOption) ApplyToGemini(t pipeline.Target) { o.set.apply(t) }

// ApplyToChat makes o a chat.Option; chat.NewHandler calls it.
func (o ClockOption) ApplyToChat(t pipeline.Target) { o.set.apply(t) }

// ApplyToCompletions makes o a completions.Option; completions.NewHandler calls it.
func (o ClockOption) ApplyToCompletions(t pipeline.Target) { o.set.apply(t) }

// ApplyToResponses makes o a responses.Option; responses.NewHandler calls it.
func (o ClockOption) ApplyToResponses(t pipeline.Target) { o.set.apply(t) }

// ApplyToImages makes o a images.Option; images.NewHandler calls it.
func (o ClockOption) ApplyToImages(t pipeline.Target) { o.set.apply(t) }
