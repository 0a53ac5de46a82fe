package messages

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/chatchain"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/sse"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax
// (the same as relay.PatternMessages).
const Pattern = "POST /v1/messages"

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option] or [endpoint.StreamOption] (see the table of its
// Options: the handler checks the format's rules itself, and replies
// carry no time). An option of another package, such as
// responses.WithStore, does not compile here.
type Option interface {
	// ApplyToMessages applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToMessages(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.StreamOption{}}

type handler struct {
	chatchain.Handler[chat.Backend]
}

// params is what the handler hands its backend: the chat request that a
// messages request translates to, and the estimate of its prompt.
type params struct {
	chat   chat.Params
	prompt int64
}

// NewHandler returns the handler of POST /v1/messages: it decodes and
// validates a messages-format request, checks the model against catalog
// (spec §1, endpoint type compat), translates the request into a chat
// request and asks backend for the reply, which it answers in the
// messages format, as JSON or as that format's event stream. Usage is
// reserved and charged to the API key as by the chat handler. See the
// package documentation for the translation and the wire details.
//
// Mount it behind auth.Middleware with
// auth.WithErrorShape(apierrors.ShapeFor), so that refusals come in the
// messages format's error shape too:
//
//	messages.Register(mux, messages.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend chat.Backend, opts ...Option) http.Handler {
	return &handler{chatchain.New("messages", catalog, backend, pipeline.New(opts, Option.ApplyToMessages), apierrors.Messages)}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	telemetry.SetRoute(r.Context(), Pattern)
	pipeline.Serve(&h.Cfg, h.Catalog, models.Compat, h, shouldRetryWriter{w}, r)
}

// shouldRetryWriter adds "x-should-retry: false" to the error replies
// that a client must not retry (every 4xx but 408, 409 and 429), which
// the official clients obey.
type shouldRetryWriter struct{ http.ResponseWriter }

func (w shouldRetryWriter) WriteHeader(status int) {
	if status >= 400 && status < 500 && status != 408 && status != 409 && status != 429 {
		w.Header().Set("X-Should-Retry", "false")
	}
	w.ResponseWriter.WriteHeader(status)
}

// Unwrap gives http.ResponseController the writer's own methods (Flush).
func (w shouldRetryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher.
func (w shouldRetryWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Decode reads the request body and decodes it into req.
func (h *handler) Decode(w http.ResponseWriter, r *http.Request, req *Request) ([]byte, error) {
	body, err := httpjson.ReadJSON(w, r, h.Cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	return body, decodeRequest(body, req)
}

// decodeRequest decodes body, one JSON object, into req.
func decodeRequest(body []byte, req *Request) error {
	if err := httpjson.Unmarshal(body, req); err != nil {
		var e *apierrors.Error
		if errors.As(err, &e) && e == errNotContent {
			return apierrors.InvalidRequest("content", "content must be a string or an array of content blocks").WithCause(err)
		}
		return err
	}
	return nil
}

// Validate checks req; see validate.
func (h *handler) Validate(req *Request) error { return validate(req) }

// Model returns the model req names.
func (h *handler) Model(req *Request) string { return req.Model }

// Prepare translates req into the backend's chat request, and returns
// its estimate: the body's bytes / 4 and max_tokens.
func (h *handler) Prepare(_ context.Context, req *Request, m *models.Model, body []byte) (*params, int64, int64, error) {
	prompt := pipeline.PromptTokens(len(body))
	p := &params{chat: chat.Params{Request: toChat(req, m), Model: m}, prompt: prompt}
	return p, prompt, pipeline.Estimate(prompt, 1, req.MaxTokens, m), nil
}

// Streams reports whether the request asked for a stream.
func (h *handler) Streams(p *params) bool { return p.chat.Request.Stream }

// Reply writes the JSON reply to p.
func (h *handler) Reply(w http.ResponseWriter, r *http.Request, p *params) (pipeline.Usage, error) {
	res, err := h.Backend.Complete(r.Context(), &p.chat)
	if err == nil {
		err = checkResult(res)
	}
	if err != nil {
		return pipeline.Usage{}, err
	}
	model := res.Model
	if model == "" {
		model = p.chat.Request.Model
	}
	res.Usage = res.Usage.Normalized()
	reply, err := replyOf(res, model)
	if err != nil {
		return pipeline.Usage{}, err
	}
	b, err := json.Marshal(reply)
	if err != nil {
		return pipeline.Usage{}, apierrors.Internal(err)
	}
	httpjson.WriteRaw(w, http.StatusOK, b)
	return chunks.Charged(&res.Usage), nil
}

// checkResult rejects a backend result that cannot be sent.
func checkResult(res *chat.Result) error {
	switch {
	case res == nil:
		return apierrors.Internal(errors.New("messages: backend returned a nil Result and no error"))
	case len(res.Choices) != 1:
		return apierrors.Internal(errors.New("messages: backend returned a Result without exactly one choice"))
	}
	return nil
}

// Deltas returns the backend's stream of p, whose chat Params' Flush is
// flush.
func (h *handler) Deltas(ctx context.Context, p *params, flush func()) iter.Seq2[chat.Delta, error] {
	p.chat.SetFlush(flush)
	return chat.Deltas(ctx, h.Backend, &p.chat)
}

// NewStream returns the event writer of the stream of p.
func (h *handler) NewStream(r *http.Request, s *sse.Stream, p *params) pipeline.DeltaWriter[chat.Delta] {
	return newEventWriter(s, &h.Cfg, p.chat.Request.Model, p.prompt)
}

// Routes returns the route of h, normally the handler of [NewHandler]:
// [Pattern], as a [route.Route] that any router can mount.
func Routes(h http.Handler) []route.Route {
	return route.List(h, Pattern)
}

// Register registers h, normally the handler of [NewHandler], on mux
// under [Pattern], the route of [Routes]: every endpoint package of
// gatewaykit mounts its handler with a Register of its own. Like
// mux.Handle, it panics if the pattern conflicts with one already
// registered.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}
