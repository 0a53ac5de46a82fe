package rerank

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax.
const Pattern = "POST /v1/rerank"

// IDPrefix starts the id of every reply.
const IDPrefix = "rerank-"

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option] or [endpoint.ValidatorOption] (see the table of
// its Options: the handler does not stream, and its replies carry no
// time). An option of another package, such as responses.WithStore, does
// not compile here.
type Option interface {
	// ApplyToRerank applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToRerank(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}}

// NewHandler returns the handler of POST /v1/rerank: it decodes and
// validates the request, checks the model against catalog (endpoint type
// [models.Rerank]), reserves the request's estimate from the API key,
// asks backend for the scores, answers with the results ranked best
// first (top_n of them, with their documents unless return_documents is
// false) and settles the reservation to the backend's prompt tokens. See
// the package documentation.
//
//	rerank.Register(mux, rerank.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if backend == nil {
		panic("rerank: NewHandler: nil Backend")
	}
	return served.NewJSON(served.New("rerank", catalog, models.Rerank, pipeline.New(opts, Option.ApplyToRerank)), served.JSON[Request, *Result]{
		Pattern:  Pattern,
		Validate: Validate,
		Model:    func(req *Request) string { return req.Model },
		Ask: func(ctx context.Context, req *Request, m *models.Model) (*Result, error) {
			return backend.Rerank(ctx, &Params{Request: req, Model: m})
		},
		Check: func(req *Request, res *Result) error { return checkResult(res, len(req.Documents)) },
		Reply: func(w http.ResponseWriter, req *Request, res *Result) (int64, error) {
			model := cmp.Or(res.Model, req.Model)
			if err := httpjson.Write(w, http.StatusOK, NewReply(ids.New(IDPrefix), model, req, res)); err != nil {
				return 0, apierrors.Internal(err)
			}
			return int64(max(res.PromptTokens, 0)), nil
		},
	})
}

// Validate checks a decoded request as the handler does, with the errors
// it sends (400 invalid_request_error naming the field).
func Validate(req *Request) error {
	switch {
	case strings.TrimSpace(req.Query) == "":
		return apierrors.InvalidRequest("query", "query is required and must not be empty")
	case req.Documents == nil:
		return apierrors.InvalidRequest("documents", "documents is required")
	case len(req.Documents) == 0:
		return apierrors.InvalidRequest("documents", "documents must hold at least one document")
	case len(req.Documents) > MaxDocuments:
		return apierrors.InvalidRequestf("documents", "documents must hold at most %d documents, got %d", MaxDocuments, len(req.Documents))
	case req.TopN < 0:
		return apierrors.InvalidRequestf("top_n", "top_n must be at least 1, got %d", req.TopN)
	}
	return nil
}

func checkResult(res *Result, n int) error {
	switch {
	case res == nil:
		return apierrors.Internal(errors.New("rerank: backend returned a nil Result and no error"))
	case len(res.Scores) != n:
		return apierrors.Internal(fmt.Errorf("rerank: backend returned %d scores for %d documents", len(res.Scores), n))
	}
	for _, s := range res.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return apierrors.Internal(fmt.Errorf("rerank: backend returned the score %v", s))
		}
	}
	return nil
}

// Reply is the JSON reply of the handler: Jina's shape (id, model,
// results, usage) with Cohere's meta.billed_units beside it, so that
// clients of either read it.
type Reply struct {
	ID      string        `json:"id"`
	Model   string        `json:"model"`
	Results []ReplyResult `json:"results"`
	Usage   Usage         `json:"usage"`
	Meta    Meta          `json:"meta"`
}

// ReplyResult is one ranked document.
type ReplyResult struct {
	// Index is the document's position in the request.
	Index          int       `json:"index"`
	RelevanceScore float64   `json:"relevance_score"`
	Document       *Document `json:"document,omitempty"`
}

// Document is a returned document.
type Document struct {
	Text string `json:"text"`
}

// Usage is the usage of a reply.
type Usage struct {
	PromptTokens int `json:"prompt_tokens"`
	TotalTokens  int `json:"total_tokens"`
}

// Meta is Cohere's meta object: one search unit per request.
type Meta struct {
	BilledUnits struct {
		SearchUnits int `json:"search_units"`
	} `json:"billed_units"`
}

// NewReply ranks the documents of req by the scores of res (higher
// first; equal scores keep the documents' order) and returns the reply.
func NewReply(id, model string, req *Request, res *Result) *Reply {
	order := make([]int, len(res.Scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(res.Scores[b], res.Scores[a]) })
	if req.TopN > 0 && req.TopN < len(order) {
		order = order[:req.TopN]
	}
	r := &Reply{ID: id, Model: model, Results: make([]ReplyResult, len(order)),
		Usage: Usage{PromptTokens: max(res.PromptTokens, 0), TotalTokens: max(res.PromptTokens, 0)}}
	r.Meta.BilledUnits.SearchUnits = 1
	for i, idx := range order {
		r.Results[i] = ReplyResult{Index: idx, RelevanceScore: res.Scores[idx]}
		if req.ReturnsDocuments() {
			r.Results[i].Document = &Document{Text: req.Documents[idx]}
		}
	}
	return r
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
