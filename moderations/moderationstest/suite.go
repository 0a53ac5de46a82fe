// Package moderationstest is the conformance suite of
// moderations.Backend: every implementation runs it.
package moderationstest

import (
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
)

// TestBackend checks the moderations.Backend contract against the backend
// that newBackend returns (called once per subtest) for model.
func TestBackend(t *testing.T, newBackend func(t *testing.T) moderations.Backend, model *models.Model) {
	moderate := func(t *testing.T, b moderations.Backend, in moderations.Input) *moderations.Result {
		t.Helper()
		req := &moderations.Request{Model: model.ID, Input: in}
		require.NoError(t, moderations.Validate(req), "the suite's request is valid")
		res, err := b.Moderate(t.Context(), &moderations.Params{Request: req, Model: model})
		require.NoError(t, err)
		require.NotNil(t, res)
		require.Len(t, res.Results, in.Results())
		for _, c := range res.Results {
			for _, f := range c.Flagged {
				require.Contains(t, moderations.Categories(), f)
			}
			for cat, s := range c.Scores {
				require.True(t, slices.Contains(moderations.Categories(), cat), cat)
				require.True(t, s >= 0 && s <= 1, "%s scores %v", cat, s)
			}
		}
		return res
	}
	t.Run("ReturnsOneResultPerString", func(t *testing.T) {
		t.Parallel()
		moderate(t, newBackend(t), moderations.Input{Texts: []string{"Have a nice day.", "Hello", "Bye"}})
	})
	t.Run("ReturnsOneResultForMultimodalParts", func(t *testing.T) {
		t.Parallel()
		moderate(t, newBackend(t), moderations.Input{Parts: []moderations.Part{{Type: "text", Text: "a cat"},
			{Type: "image_url", ImageURL: "https://example.com/cat.png"}}})
	})
	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				req := &moderations.Request{Model: model.ID, Input: moderations.Input{Texts: []string{"x"}}}
				if res, err := b.Moderate(t.Context(), &moderations.Params{Request: req, Model: model}); err != nil || len(res.Results) != 1 {
					t.Errorf("concurrent Moderate: %v", err)
				}
			})
		}
		wg.Wait()
	})
}
