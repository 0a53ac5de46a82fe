package moderations

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"

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
const Pattern = "POST /v1/moderations"

// IDPrefix starts the id of every reply.
const IDPrefix = "modr-"

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option] or [endpoint.ValidatorOption] (see the table of
// its Options: the handler does not stream, and its replies carry no
// time). An option of another package, such as responses.WithStore, does
// not compile here.
type Option interface {
	// ApplyToModerations applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToModerations(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}}

// NewHandler returns the handler of POST /v1/moderations: it decodes and
// validates the request, checks the model against catalog (endpoint type
// [models.Moderation]), reserves the request's estimate from the API key,
// asks backend for the classifications, answers with OpenAI's moderation
// object (every category in every result) and settles the reservation to
// the backend's input tokens. See the package documentation.
//
//	moderations.Register(mux, moderations.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if backend == nil {
		panic("moderations: NewHandler: nil Backend")
	}
	return served.NewJSON(served.New("moderations", catalog, models.Moderation, pipeline.New(opts, Option.ApplyToModerations)), served.JSON[Request, *Result]{
		Pattern:  Pattern,
		Validate: Validate,
		Model:    func(req *Request) string { return req.Model },
		Ask: func(ctx context.Context, req *Request, m *models.Model) (*Result, error) {
			return backend.Moderate(ctx, &Params{Request: req, Model: m})
		},
		Check: func(req *Request, res *Result) error { return checkResult(res, req.Input.Results()) },
		Reply: func(w http.ResponseWriter, req *Request, res *Result) (int64, error) {
			model := cmp.Or(res.Model, req.Model)
			if err := httpjson.Write(w, http.StatusOK, NewReply(ids.New(IDPrefix), model, &req.Input, res)); err != nil {
				return 0, apierrors.Internal(err)
			}
			return int64(max(res.InputTokens, 0)), nil
		},
	})
}

// Validate checks a decoded request as the handler does, with the errors
// it sends (400 invalid_request_error naming the field).
func Validate(req *Request) error {
	switch {
	case req.Input.Texts == nil && req.Input.Parts == nil:
		return apierrors.InvalidRequest("input", "input is required")
	case len(req.Input.Texts) > MaxInputs || len(req.Input.Parts) > MaxInputs:
		return apierrors.InvalidRequestf("input", "input must have at most %d items", MaxInputs)
	}
	for i, p := range req.Input.Parts {
		if p.Type == "image_url" && !endpoint.ValidImageURL(p.ImageURL) {
			return apierrors.InvalidRequestf("input", "input[%d].image_url.url must be an http(s) URL or a data URI of an image", i)
		}
	}
	return nil
}

func checkResult(res *Result, n int) error {
	switch {
	case res == nil:
		return apierrors.Internal(errors.New("moderations: backend returned a nil Result and no error"))
	case len(res.Results) != n:
		return apierrors.Internal(fmt.Errorf("moderations: backend returned %d results for %d", len(res.Results), n))
	}
	known := Categories()
	for _, c := range res.Results {
		for _, f := range c.Flagged {
			if !slices.Contains(known, f) {
				return apierrors.Internal(fmt.Errorf("moderations: backend flagged the unknown category %q", f))
			}
		}
		for k, s := range c.Scores {
			if !slices.Contains(known, k) || math.IsNaN(s) || s < 0 || s > 1 {
				return apierrors.Internal(fmt.Errorf("moderations: backend scored %q %v", k, s))
			}
		}
	}
	return nil
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
