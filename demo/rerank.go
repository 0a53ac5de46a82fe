package demo

import (
	"context"
	"math"

	"github.com/gatewaykit/gatewaykit/rerank"
)

// RerankBackend is the demo's rerank.Backend. Create it with
// [NewRerankBackend]; it is safe for concurrent use.
type RerankBackend struct{}

// NewRerankBackend returns the demo rerank backend.
func NewRerankBackend() *RerankBackend { return &RerankBackend{} }

// Rerank scores each document by its word overlap with the query
// ([RerankScore]); the prompt tokens are those of the query once per
// document plus those of the documents.
func (*RerankBackend) Rerank(ctx context.Context, p *rerank.Params) (*rerank.Result, error) {
	req := p.Request
	res := &rerank.Result{Scores: make([]float64, len(req.Documents))}
	q := CountTokens(req.Query)
	for i, d := range req.Documents {
		res.Scores[i] = RerankScore(req.Query, d)
		res.PromptTokens += q + CountTokens(d)
	}
	return res, ctx.Err()
}

// RerankScore is the demo's relevance of document to query: the number
// of distinct words they share divided by the geometric mean of their
// numbers of distinct words (lower-cased), rounded to 4 decimals; 0 when
// either has no word, 1 for the same set of words.
func RerankScore(query, document string) float64 {
	q, d := wordSet(query), wordSet(document)
	if len(q) == 0 || len(d) == 0 {
		return 0
	}
	shared := 0
	for w := range q {
		if d[w] {
			shared++
		}
	}
	s := float64(shared) / math.Sqrt(float64(len(q))*float64(len(d)))
	return math.Round(s*1e4) / 1e4
}

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range words(s) {
		m[w] = true
	}
	return m
}
