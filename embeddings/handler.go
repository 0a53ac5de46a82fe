package embeddings

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
)

// Pattern is the route served by [NewHandler], in [http.ServeMux] syntax.
const Pattern = "POST /v1/embeddings"

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option] or [endpoint.ValidatorOption] (see the table of
// its Options: the handler does not stream, and its replies carry no
// time). An option of another package, such as responses.WithStore, does
// not compile here.
type Option interface {
	// ApplyToEmbeddings applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToEmbeddings(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}}

// NewHandler returns the handler of POST /v1/embeddings: it decodes and
// validates the request, checks the model against catalog (endpoint type
// [models.Embeddings]), reserves the request's estimate from the API key
// (auth.Reserve; 403 insufficient_quota when all of the key's quota is
// reserved), asks backend for the vectors, answers with the list object
// (floats, or base64 for encoding_format "base64") and settles the
// reservation to the prompt tokens that the backend counted. See the
// package documentation for the wire details.
//
//	embeddings.Register(mux, embeddings.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if backend == nil {
		panic("embeddings: NewHandler: nil Backend")
	}
	return served.NewJSON(served.New("embeddings", catalog, models.Embeddings, pipeline.New(opts, Option.ApplyToEmbeddings)), served.JSON[Request, *Result]{
		Pattern:  Pattern,
		Validate: Validate,
		Model:    func(req *Request) string { return req.Model },
		Ask: func(ctx context.Context, req *Request, m *models.Model) (*Result, error) {
			return backend.Embed(ctx, &Params{Request: req, Model: m})
		},
		Check: func(req *Request, res *Result) error { return checkResult(res, req) },
		Reply: func(w http.ResponseWriter, req *Request, res *Result) (int64, error) {
			model := cmp.Or(res.Model, req.Model)
			httpjson.WriteRaw(w, http.StatusOK, AppendReply(nil, res, model, req.EncodingFormat == EncodingBase64))
			return int64(max(res.PromptTokens, 0)), nil
		},
	})
}

// Validate checks a decoded request as the handler does, with the
// errors it sends (400 invalid_request_error naming the field).
func Validate(req *Request) error {
	switch n := req.Input.Len(); {
	case req.Input.Texts == nil && req.Input.Tokens == nil:
		return apierrors.InvalidRequest("input", "input is required")
	case n > MaxInputs:
		return apierrors.InvalidRequestf("input", "input must have at most %d items, got %d", MaxInputs, n)
	}
	for i, s := range req.Input.Texts {
		if s == "" {
			return apierrors.InvalidRequestf("input", "input[%d] is empty; every input must be a non-empty string", i)
		}
	}
	for i, t := range req.Input.Tokens {
		if len(t) == 0 {
			return apierrors.InvalidRequestf("input", "input[%d] is an empty token array", i)
		}
		for _, id := range t {
			if id < 0 || id > math.MaxInt32 {
				return apierrors.InvalidRequestf("input", "input[%d] holds the token id %d, out of range", i, id)
			}
		}
	}
	if req.Dimensions < 0 || req.Dimensions > MaxDimensions {
		return apierrors.InvalidRequestf("dimensions", "dimensions must be between 1 and %d, got %d", MaxDimensions, req.Dimensions)
	}
	switch req.EncodingFormat {
	case "", EncodingFloat, EncodingBase64:
	default:
		return apierrors.InvalidRequestf("encoding_format", "encoding_format must be %s or %s, got %s", apierrors.Quote(EncodingFloat), apierrors.Quote(EncodingBase64), apierrors.Quote(req.EncodingFormat))
	}
	return nil
}

// checkResult rejects a backend result that cannot be sent.
func checkResult(res *Result, req *Request) error {
	switch {
	case res == nil:
		return apierrors.Internal(errors.New("embeddings: backend returned a nil Result and no error"))
	case len(res.Embeddings) != req.Input.Len():
		return apierrors.Internal(fmt.Errorf("embeddings: backend returned %d vectors for %d inputs", len(res.Embeddings), req.Input.Len()))
	}
	for i, v := range res.Embeddings {
		if req.Dimensions > 0 && len(v) != req.Dimensions {
			return apierrors.Internal(fmt.Errorf("embeddings: backend returned a vector of %d values for dimensions %d", len(v), req.Dimensions))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return apierrors.Internal(fmt.Errorf("embeddings: backend returned a vector %d holding %v", i, x))
			}
		}
	}
	return nil
}

// AppendReply appends the JSON reply of res to b: the list object with one
// embedding per vector, as floats or, if b64, as base64 text of
// little-endian float32 values, and the usage. The vectors must hold
// finite values.
func AppendReply(b []byte, res *Result, model string, b64 bool) []byte {
	b = append(b, `{"object":"list","data":[`...)
	var raw []byte
	for i, v := range res.Embeddings {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"object":"embedding","index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"embedding":`...)
		if b64 {
			raw = raw[:0]
			for _, x := range v {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
			}
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, raw)
			b = append(b, '"')
		} else {
			b = append(b, '[')
			for j, x := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = strconv.AppendFloat(b, float64(x), 'g', -1, 32)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	name, _ := json.Marshal(model)
	b = append(b, name...)
	n := strconv.Itoa(max(res.PromptTokens, 0))
	b = append(b, `,"usage":{"prompt_tokens":`...)
	b = append(b, n...)
	b = append(b, `,"total_tokens":`...)
	b = append(b, n...)
	return append(b, "}}"...)
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
