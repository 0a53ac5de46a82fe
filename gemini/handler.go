package gemini

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/chatchain"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax:
// POST /v1beta/models/{model}:generateContent and
// /v1beta/models/{model}:streamGenerateContent. ServeMux wildcards are
// whole path segments, so the wildcard takes the rest of the path and the
// handler splits the model from the method at the last colon. It is the
// pattern of the relay's access handler (relay.PatternGemini), so that
// the handler serves as that handler's fallback as well.
const Pattern = "POST /v1beta/models/{action...}"

// The methods of [Pattern].
const (
	MethodGenerate = "generateContent"
	MethodStream   = "streamGenerateContent"
)

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option] or [endpoint.StreamOption] (see the table of its
// Options: the request is checked by its translation, and replies carry
// no time). An option of another package, such as responses.WithStore,
// does not compile here.
type Option interface {
	// ApplyToGemini applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToGemini(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.StreamOption{}}

type handler struct {
	chatchain.Handler[chat.Backend]
}

// NewHandler returns the handler of the Gemini-style content generation
// over backend, a chat backend: it decodes the request, translates it
// into a chat request ([ToChat]), checks the model against catalog (the
// endpoint type compat, as chat completions need), reserves the request's
// estimate from the API key, asks backend, and answers in Google's
// format: a [Response], or a stream of them (an SSE stream with
// ?alt=sse, otherwise one JSON array); it charges the reply's total
// tokens to the key. Errors are Google's error object. See the package
// documentation.
//
// Mount it behind auth.Middleware with auth.WithErrorShape(apierrors.ShapeFor):
//
//	gemini.Register(mux, gemini.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend chat.Backend, opts ...Option) http.Handler {
	return &handler{chatchain.New("gemini", catalog, backend, pipeline.New(opts, Option.ApplyToGemini), apierrors.Google)}
}

// Action splits the end of a Gemini-style path, the {action...} of
// [Pattern] ("demo-chat:generateContent"), into the model and the method.
// ok is false unless the method is one of [MethodGenerate] and
// [MethodStream] and the model is not empty.
func Action(action string) (model, method string, ok bool) {
	i := strings.LastIndexByte(action, ':')
	if i <= 0 {
		return "", "", false
	}
	model, method = action[:i], action[i+1:]
	model = strings.TrimPrefix(model, "models/")
	if model == "" || (method != MethodGenerate && method != MethodStream) {
		return "", "", false
	}
	return model, method, true
}

// action returns the {action...} of r: its path value, or the rest of
// the path after /v1beta/models/ when the handler is mounted otherwise.
func action(r *http.Request) string {
	if a := r.PathValue("action"); a != "" {
		return a
	}
	const prefix = "/v1beta/models/"
	if i := strings.Index(r.URL.Path, prefix); i >= 0 {
		return r.URL.Path[i+len(prefix):]
	}
	return ""
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	telemetry.SetRoute(r.Context(), Pattern)
	model, method, ok := Action(action(r))
	if !ok {
		h.Cfg.Fail(w, r, errMethod(r.URL.Path))
		return
	}
	ctx := r.Context()
	ad := &admission{h: h, model: model}
	p, prompt, rsv, err := pipeline.Admit[Request, *chat.Params](&h.Cfg, h.Catalog, models.Compat, ad, w, r)
	if err != nil {
		h.Cfg.Fail(w, r, err)
		return
	}
	if method == MethodGenerate {
		var used pipeline.Usage
		defer func() { h.Cfg.SettleCall(ctx, rsv, used, err) }()
		used, err = h.reply(w, r, p, ad.thoughts)
		if err != nil {
			h.Cfg.Fail(w, r, err)
		}
		return
	}
	sw := newWire(w, r, r.URL.Query().Get("alt") == "sse", h.Cfg.KeepAlive)
	defer sw.close()
	tr := newTranslator(model, p.Request.Choices(), ad.thoughts, prompt)
	err = h.stream(ctx, sw, tr, p)
	if err == nil {
		err = sw.event(tr.finish())
	}
	if err == nil {
		err = sw.end()
	}
	if err != nil {
		h.endWithError(w, r, sw, err)
	}
	h.Cfg.SettleCall(ctx, rsv, tr.used(), err)
}

// stream writes the events of the backend's stream of p as chat's
// handler does (pipeline.WriteDeltas): in the handler's goroutine,
// flushed after every delta, or, once the stream calls p.Flush (a
// relay's, before each read of its upstream; a reply that is all at
// hand, first), when it calls it and at the end.
func (h *handler) stream(ctx context.Context, sw *wire, tr *translator, p *chat.Params) error {
	return pipeline.WriteDeltas(ctx, sw, func(ctx context.Context, flush func()) iter.Seq2[chat.Delta, error] {
		p.SetFlush(flush)
		return chat.Deltas(ctx, h.Backend, p)
	}, &deltaWriter{tr: tr, sw: sw})
}

// deltaWriter is the pipeline.DeltaWriter of a stream: the translator's
// events, written to the wire.
type deltaWriter struct {
	tr *translator
	sw *wire
}

// Add writes the events of one delta, without flushing them.
func (dw *deltaWriter) Add(d *chat.Delta) error {
	evs, err := dw.tr.add(d)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if err := dw.sw.event(ev); err != nil {
			return err
		}
	}
	return nil
}

// Finish, End and Used complete pipeline.DeltaWriter; the handler ends
// the stream itself.
func (dw *deltaWriter) Finish() error                    { return nil }
func (dw *deltaWriter) End(*http.Request, error)         {}
func (dw *deltaWriter) Used(prompt int64) pipeline.Usage { return dw.tr.used() }

// endWithError sends err: as a JSON error with its status before the
// stream started, and as a last event in Google's error object after.
func (h *handler) endWithError(w http.ResponseWriter, r *http.Request, sw *wire, err error) {
	if r.Context().Err() != nil || (errors.Is(err, context.Canceled) && !apierrors.Has(err)) {
		return
	}
	if sw.abandon() {
		h.Cfg.Fail(w, r, err)
		return
	}
	h.Cfg.Hook(r, err)
	e := apierrors.From(err)
	h.Cfg.Renderer.Logger.LogAttrs(r.Context(), levelOf(e), "gemini: stream failed", errorAttr(e))
	_ = sw.fail(errorBody(e))
}

// reply asks the backend for the whole reply and writes it; it returns
// the usage to charge.
func (h *handler) reply(w http.ResponseWriter, r *http.Request, p *chat.Params, thoughts bool) (pipeline.Usage, error) {
	res, err := h.Backend.Complete(r.Context(), p)
	if err != nil {
		return pipeline.Usage{}, err
	}
	if res == nil || len(res.Choices) != p.Request.Choices() {
		return pipeline.Usage{}, apierrors.Internal(fmt.Errorf("gemini: backend returned %s for %d candidates", describe(res), p.Request.Choices()))
	}
	res.Usage = res.Usage.Normalized()
	out := FromResult(res, p.Request.Model, thoughts)
	if err := httpjson.Write(w, http.StatusOK, out); err != nil {
		return pipeline.Usage{}, err
	}
	return chunks.Charged(&res.Usage), nil
}

func describe(res *chat.Result) string {
	if res == nil {
		return "a nil Result"
	}
	return fmt.Sprintf("%d choices", len(res.Choices))
}

// admission is the part of pipeline.Admit that is this handler's, for
// one request.
type admission struct {
	h        *handler
	model    string
	chat     *chat.Request
	thoughts bool
}

// Decode reads and decodes the request body.
func (a *admission) Decode(w http.ResponseWriter, r *http.Request, req *Request) ([]byte, error) {
	body, err := httpjson.ReadJSON(w, r, a.h.Cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	d, err := DecodeRequest(body)
	if err != nil {
		return nil, err
	}
	*req = *d
	return body, nil
}

// Validate checks the request by translating it.
func (a *admission) Validate(req *Request) error {
	c, err := ToChat(a.model, req)
	if err != nil {
		return err
	}
	a.chat = c
	if gc := req.GenerationConfig; gc != nil && gc.ThinkingConfig != nil {
		a.thoughts = gc.ThinkingConfig.IncludeThoughts
	}
	return nil
}

// Model returns the model of the path.
func (a *admission) Model(*Request) string { return a.model }

// Prepare makes the chat params and the estimate.
func (a *admission) Prepare(_ context.Context, _ *Request, m *models.Model, body []byte) (*chat.Params, int64, int64, error) {
	prompt := pipeline.PromptTokens(len(body))
	return &chat.Params{Request: a.chat, Model: m}, prompt, pipeline.Estimate(prompt, a.chat.Choices(), a.chat.TokenLimit(), m), nil
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
