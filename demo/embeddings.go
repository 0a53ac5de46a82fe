package demo

import (
	"context"
	"math"
	"strconv"

	"github.com/gatewaykit/gatewaykit/embeddings"
)

// EmbeddingDimensions is the length of the demo's vectors when a request
// does not set dimensions.
const EmbeddingDimensions = 256

// EmbeddingBackend is the demo's embeddings.Backend. Create it with
// [NewEmbeddingBackend]; it is safe for concurrent use.
type EmbeddingBackend struct{}

// NewEmbeddingBackend returns the demo embeddings backend (see the
// package documentation, Embeddings).
func NewEmbeddingBackend() *EmbeddingBackend { return &EmbeddingBackend{} }

// Embed returns one unit vector per input (see the package
// documentation).
func (*EmbeddingBackend) Embed(ctx context.Context, p *embeddings.Params) (*embeddings.Result, error) {
	req := p.Request
	dims := req.Dimensions
	if dims <= 0 {
		dims = EmbeddingDimensions
	}
	res := &embeddings.Result{Embeddings: make([][]float32, 0, req.Input.Len())}
	for _, s := range req.Input.Texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		feats := words(s)
		if len(feats) == 0 {
			feats = []string{s}
		}
		res.Embeddings = append(res.Embeddings, Embedding(feats, dims))
		res.PromptTokens += CountTokens(s)
	}
	for _, toks := range req.Input.Tokens {
		feats := make([]string, len(toks))
		for i, t := range toks {
			feats[i] = "#" + strconv.FormatInt(t, 10)
		}
		res.Embeddings = append(res.Embeddings, Embedding(feats, dims))
		res.PromptTokens += len(toks)
	}
	return res, nil
}

// Embedding returns the demo's unit vector of dims values for the
// features feats (the words of a text): each feature adds ±1 at four
// positions chosen by its hash, and the sum is normalised to length 1.
// Texts that share words get vectors with a positive dot product.
func Embedding(feats []string, dims int) []float32 {
	v := make([]float64, dims)
	for _, f := range feats {
		h := hash64(f)
		for k := range 4 {
			x := h >> (16 * k)
			sign := 1.0
			if x&0x8000 != 0 {
				sign = -1
			}
			v[int(x&0x7fff)%dims] += sign
		}
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}
