package chunks_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// TestAppendUsage: AppendUsage writes what encoding/json writes, details
// included (issue 26), and Charged takes the details apart.
func TestAppendUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		u       endpoint.Usage
		charged pipeline.Usage
	}{
		{"no details", endpoint.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}, pipeline.Usage{Input: 3, Output: 4}},
		{"reasoning", endpoint.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7,
			CompletionTokensDetails: &endpoint.CompletionTokensDetails{ReasoningTokens: 2}}, pipeline.Usage{Input: 3, Output: 4, Reasoning: 2}},
		{"zero details", endpoint.Usage{PromptTokensDetails: &endpoint.PromptTokensDetails{},
			CompletionTokensDetails: &endpoint.CompletionTokensDetails{}}, pipeline.Usage{}},
		{"every detail", endpoint.Usage{PromptTokens: 100, CompletionTokens: 50, TotalTokens: 150,
			PromptTokensDetails: &endpoint.PromptTokensDetails{CachedTokens: 40, AudioTokens: 5, CacheWriteTokens: 20},
			CompletionTokensDetails: &endpoint.CompletionTokensDetails{ReasoningTokens: 30, AudioTokens: 2,
				AcceptedPredictionTokens: 3, RejectedPredictionTokens: 4}},
			pipeline.Usage{Input: 100, Output: 50, Cached: 40, CacheWrite: 20, Reasoning: 30}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want, err := json.Marshal(tc.u)
			require.NoError(t, err)
			require.Equal(t, string(want), string(chunks.AppendUsage(nil, &tc.u)))
			require.Equal(t, tc.charged, chunks.Charged(&tc.u))
		})
	}
}
