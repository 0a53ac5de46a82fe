package chat

import (
	"errors"
	"net/http"
	"sync"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax.
const Pattern = "POST /v1/chat/completions"

type handler struct {
	backend Backend
	catalog models.Catalog
	cfg     config
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
//	mux.Handle(chat.Pattern, chat.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if catalog == nil {
		panic("chat: NewHandler: nil Catalog")
	}
	if backend == nil {
		panic("chat: NewHandler: nil Backend")
	}
	h := &handler{backend: backend, catalog: catalog, cfg: newConfig(opts)}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	req := new(Request)
	body, err := h.decode(w, r, req)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	if err := validate(h.cfg.Validate, h.cfg.CustomValidator, req); err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	m, err := models.Require(ctx, h.catalog, req.Model, models.Compat, h.cfg.Allow)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	prompt := pipeline.PromptTokens(len(body))
	rsv, err := h.cfg.Reserve(ctx, pipeline.Estimate(prompt, req.Choices(), req.TokenLimit(), m))
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
	normalize(res.Choices)
	usage := res.Usage
	usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
	model := res.Model
	if model == "" {
		model = req.Model
	}
	if res.Raw != nil && !jsonenc.IsObject(res.Raw) {
		h.cfg.Fail(w, r, backendError("raw reply that is not a JSON object: %.40q", res.Raw))
		return
	}
	buf := replyBuffers.Get().(*[]byte)
	var reply []byte
	if res.Raw != nil {
		reply = appendRawCompletion((*buf)[:0], ids.New(IDPrefix), h.cfg.Now().Unix(), model, res.Raw, &usage)
	} else {
		reply = appendCompletion((*buf)[:0], ids.New(IDPrefix), h.cfg.Now().Unix(), model, res.Choices, &usage)
	}
	httpjson.WriteRaw(w, http.StatusOK, reply)
	if cap(reply) <= maxPooledReply {
		*buf = reply
		replyBuffers.Put(buf)
	}
	used = int64(usage.TotalTokens)
}

// replyBuffers holds the buffers that non-streaming replies are encoded
// into; a ResponseWriter does not keep the bytes given to Write. Buffers
// that grew over maxPooledReply are left to the garbage collector, so
// that one long reply does not pin its memory.
var replyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

const maxPooledReply = 64 << 10

// decode reads and decodes the request body, and returns it.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, req *Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		if err := httpjson.CheckContentType(r); err != nil {
			return nil, err
		}
	}
	body, err := httpjson.ReadBody(w, r, h.cfg.MaxBytes)
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
