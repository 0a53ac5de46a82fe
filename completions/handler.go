package completions

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax.
const Pattern = "POST /v1/completions"

type handler struct {
	backend Backend
	catalog models.Catalog
	cfg     config
}

// NewHandler returns the handler of POST /v1/completions: it decodes and
// validates the request, checks the model against catalog (spec §1,
// endpoint type compat), asks backend for the reply, answers with JSON or
// an SSE stream, and charges the reply's total tokens to the API key:
// it reserves an estimate before asking the backend ([auth.Reserve]; 403
// insufficient_quota when all of the key's quota is reserved) and settles
// it to the usage when the reply ends. See the package documentation for
// the wire details and the estimates.
//
// Mount it behind [auth.Middleware]:
//
//	mux.Handle(completions.Pattern, completions.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if catalog == nil {
		panic("completions: NewHandler: nil Catalog")
	}
	if backend == nil {
		panic("completions: NewHandler: nil Backend")
	}
	h := &handler{backend: backend, catalog: catalog, cfg: newConfig(opts)}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	req := new(Request)
	body, err := decode(w, r, h.cfg.MaxBytes, req)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	if err := validate(h.cfg.Validate, req); err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	m, err := models.Require(ctx, h.catalog, req.Model, models.Compat, h.cfg.Allow)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	limit := 0
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	prompt := pipeline.PromptTokens(len(body))
	rsv, err := h.cfg.Reserve(ctx, pipeline.Estimate(prompt, req.Choices(), limit, m))
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	p := &Params{Request: req, Model: m, Body: body}
	if req.Stream {
		h.serveStream(w, r, p, rsv, prompt)
		return
	}
	var used int64 // charged when the reply ends; nothing if it fails
	defer func() { h.cfg.Settle(ctx, rsv, used) }()
	res, err := h.backend.Complete(ctx, p)
	if err == nil {
		err = checkResult(res, req.Choices())
	}
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	usage := res.Usage
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	model := res.Model
	if model == "" {
		model = req.Model
	}
	var reply []byte
	switch {
	case res.Raw == nil:
		reply = appendCompletion(make([]byte, 0, 512), ids.New(IDPrefix), h.cfg.Now().Unix(), model, res.Choices, &usage)
	case jsonenc.IsObject(res.Raw):
		reply = appendRawCompletion(make([]byte, 0, 128+len(res.Raw)), ids.New(IDPrefix), h.cfg.Now().Unix(), model, res.Raw, &usage)
	default:
		h.cfg.Fail(w, r, backendError("raw reply that is not a JSON object: %.40q", res.Raw))
		return
	}
	httpjson.WriteRaw(w, http.StatusOK, reply)
	used = int64(usage.TotalTokens)
}

// decode reads the request body, at most maxBytes of it, decodes it into
// req as httpjson.Decode does, and returns it.
func decode(w http.ResponseWriter, r *http.Request, maxBytes int64, req *Request) ([]byte, error) {
	if err := httpjson.CheckContentType(r); err != nil {
		return nil, err
	}
	body, err := httpjson.ReadBody(w, r, maxBytes)
	if err != nil {
		return nil, err
	}
	return body, httpjson.Unmarshal(body, req)
}

// checkResult rejects a backend result that cannot be sent.
func checkResult(res *Result, n int) error {
	switch {
	case res == nil:
		return apierrors.Internal(errors.New("completions: backend returned a nil Result and no error"))
	case len(res.Choices) != n:
		return apierrors.Internal(errors.New("completions: backend returned " + strconv.Itoa(len(res.Choices)) + " choices for " + strconv.Itoa(n)))
	}
	return nil
}

// finishReason is o's finish reason, or stop.
func finishReason(o *Output) endpoint.FinishReason {
	if o.FinishReason == "" {
		return endpoint.FinishStop
	}
	return o.FinishReason
}
