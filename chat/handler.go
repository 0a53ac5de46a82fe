package chat

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax.
const Pattern = "POST /v1/chat/completions"

// An Option configures [NewHandler]: any option of package [endpoint]
// (see the table of its Options). An option of another package, such as
// responses.WithStore, does not compile here.
type Option interface {
	// ApplyToChat applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToChat(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}, endpoint.StreamOption{}, endpoint.ClockOption{}}

type handler struct {
	backend Backend
	catalog models.Catalog
	cfg     pipeline.Config
}

// NewHandler returns the handler of POST /v1/chat/completions: it decodes
// and validates the request, checks the model against catalog (spec §1,
// endpoint type compat), asks backend for the reply, answers with JSON or
// an SSE stream, and charges the reply's total tokens to the API key:
// it reserves an estimate before asking the backend ([auth.Reserve]; 403
// insufficient_quota when all of the key's quota is reserved) and settles
// it to the usage when the reply ends. See the package documentation for
// the wire details and the estimates.
//
// Mount it behind [auth.Middleware]:
//
//	chat.Register(mux, chat.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	pipeline.MustHave("chat", catalog, backend)
	h := &handler{catalog: catalog, cfg: pipeline.New(opts, Option.ApplyToChat)}
	h.backend = intercept(backend, "chat", h.cfg.Chain)
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	telemetry.SetRoute(r.Context(), Pattern)
	pipeline.Serve(&h.cfg, h.catalog, models.Compat, h, w, r)
}

// The methods below are the steps of pipeline.Serve that are chat's own.

// Validate checks req; see validate.
func (h *handler) Validate(req *Request) error {
	return validate(h.cfg.Validate, req)
}

// Model returns the model req names.
func (h *handler) Model(req *Request) string { return req.Model }

// Prepare makes the Params of req, and its estimate.
func (h *handler) Prepare(_ context.Context, req *Request, m *models.Model, body []byte) (*Params, int64, int64, error) {
	prompt := pipeline.PromptTokens(len(body))
	return &Params{Request: req, Model: m, src: pipeline.NewSource(req, body)}, prompt, pipeline.Estimate(prompt, req.Choices(), req.TokenLimit(), m), nil
}

// Streams reports whether the request asked for a stream.
func (h *handler) Streams(p *Params) bool { return p.Request.Stream }

// Reply writes the JSON reply to p: the upstream's reply with the
// handler's head and usage when the Result carries one (SetReply), and
// otherwise the handler's encoding of the Result.
func (h *handler) Reply(w http.ResponseWriter, r *http.Request, p *Params) (pipeline.Usage, error) {
	res, err := h.backend.Complete(r.Context(), p)
	if err == nil {
		err = checkResult(res, p.Request.Choices())
	}
	if err != nil {
		return pipeline.Usage{}, err
	}
	raw := res.upstreamReply()
	normalize(res.Choices)
	model := cmp.Or(res.Model, p.Request.Model)
	return chunks.Reply(w, "chat", raw, res.Usage, func(b []byte, u *Usage) []byte {
		if raw != nil {
			return appendRawCompletion(b, ids.New(IDPrefix), h.cfg.Now().Unix(), model, raw, u)
		}
		return appendCompletion(b, ids.New(IDPrefix), h.cfg.Now().Unix(), model, res.Choices, u)
	})
}

// Decode reads and decodes the request body, and returns it.
func (h *handler) Decode(w http.ResponseWriter, r *http.Request, req *Request) ([]byte, error) {
	body, err := httpjson.ReadJSON(w, r, h.cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	return body, decodeRequest(body, req)
}

// checkResult rejects a backend result that cannot be sent.
func checkResult(res *Result, n int) error {
	switch {
	case res == nil:
		return apierrors.Internal(errors.New("chat: backend returned a nil Result and no error"))
	case len(res.Choices) != n:
		return apierrors.Internal(errors.New("chat: backend returned " + itoa(len(res.Choices)) + " choices for n=" + itoa(n)))
	}
	return nil
}

// normalize fills the defaults of the outputs: finish reasons, tool call
// types and ids.
func normalize(outs []Output) {
	for i := range outs {
		o := &outs[i]
		o.FinishReason = finishReason(o)
		for j := range o.ToolCalls {
			tc := &o.ToolCalls[j]
			if tc.Type == "" {
				tc.Type = "function"
			}
			if tc.ID == "" {
				tc.ID = ids.New("call_")
			}
		}
	}
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
