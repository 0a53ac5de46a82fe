// Package reranktest is the conformance suite of rerank.Backend: every
// implementation runs it.
package reranktest

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/rerank"
)

// TestBackend checks the rerank.Backend contract against the backend that
// newBackend returns (called once per subtest) for model.
func TestBackend(t *testing.T, newBackend func(t *testing.T) rerank.Backend, model *models.Model) {
	t.Run("ScoresEveryDocumentInOrder", func(t *testing.T) {
		t.Parallel()
		req := &rerank.Request{Model: model.ID, Query: "capital of France",
			Documents: rerank.Documents{"Paris is the capital of France.", "Cats sleep.", "Paris is the capital of France."}}
		require.NoError(t, rerank.Validate(req))
		res, err := newBackend(t).Rerank(t.Context(), &rerank.Params{Request: req, Model: model})
		require.NoError(t, err)
		require.Len(t, res.Scores, 3)
		for _, s := range res.Scores {
			require.False(t, math.IsNaN(s) || math.IsInf(s, 0))
		}
		require.Equal(t, res.Scores[0], res.Scores[2], "the same document gets the same score")
		require.GreaterOrEqual(t, res.PromptTokens, 0)
	})
	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				req := &rerank.Request{Model: model.ID, Query: "q", Documents: rerank.Documents{"a", "q"}}
				if res, err := b.Rerank(t.Context(), &rerank.Params{Request: req, Model: model}); err != nil || len(res.Scores) != 2 {
					t.Errorf("concurrent Rerank: %v", err)
				}
			})
		}
		wg.Wait()
	})
}
