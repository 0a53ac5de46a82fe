// Package embeddingstest is the conformance suite of embeddings.Backend:
// every implementation runs it.
package embeddingstest

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestBackend checks the embeddings.Backend contract against the backend
// that newBackend returns (called once per subtest) for model, which must
// accept string and token inputs and dimensions 8.
func TestBackend(t *testing.T, newBackend func(t *testing.T) embeddings.Backend, model *models.Model) {
	embed := func(t *testing.T, b embeddings.Backend, req *embeddings.Request) *embeddings.Result {
		t.Helper()
		require.NoError(t, embeddings.Validate(req), "the suite's request is valid")
		res, err := b.Embed(t.Context(), &embeddings.Params{Request: req, Model: model})
		require.NoError(t, err)
		require.NotNil(t, res)
		return res
	}
	t.Run("ReturnsOneFiniteVectorPerInputInOrder", func(t *testing.T) {
		t.Parallel()
		req := &embeddings.Request{Model: model.ID, Input: embeddings.Input{Texts: []string{"red apple", "green pear", "red apple"}}}
		res := embed(t, newBackend(t), req)
		require.Len(t, res.Embeddings, 3)
		for _, v := range res.Embeddings {
			require.NotEmpty(t, v)
			require.Len(t, v, len(res.Embeddings[0]), "every vector has the same length")
			for _, x := range v {
				require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0))
			}
		}
		require.Equal(t, res.Embeddings[0], res.Embeddings[2], "the same text gets the same vector")
		require.GreaterOrEqual(t, res.PromptTokens, 0)
	})
	t.Run("HonoursDimensions", func(t *testing.T) {
		t.Parallel()
		req := &embeddings.Request{Model: model.ID, Dimensions: 8, Input: embeddings.Input{Texts: []string{"a", "b"}}}
		for _, v := range embed(t, newBackend(t), req).Embeddings {
			require.Len(t, v, 8)
		}
	})
	t.Run("EmbedsTokenArrays", func(t *testing.T) {
		t.Parallel()
		req := &embeddings.Request{Model: model.ID, Input: embeddings.Input{Tokens: [][]int64{{1, 2, 3}, {4}}}}
		require.Len(t, embed(t, newBackend(t), req).Embeddings, 2)
	})
	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				req := &embeddings.Request{Model: model.ID, Input: embeddings.Input{Texts: []string{"concurrent"}}}
				res, err := b.Embed(t.Context(), &embeddings.Params{Request: req, Model: model})
				if err != nil || res == nil || len(res.Embeddings) != 1 {
					t.Errorf("concurrent Embed: %v", err)
				}
			})
		}
		wg.Wait()
	})
}
