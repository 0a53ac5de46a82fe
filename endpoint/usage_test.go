package endpoint_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"
)

// TestUsageNormalized: the counts from 0 to MaxOutputTokens, each detail
// at most its count, the cached and cache-write tokens together at most
// the prompt, and the details absent when the backend sent none.
func TestUsageNormalized(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   endpoint.Usage
		want string
	}{
		{"no details", endpoint.Usage{PromptTokens: 3, CompletionTokens: 4},
			`{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}`},
		{"every detail", endpoint.Usage{PromptTokens: 100, CompletionTokens: 50,
			PromptTokensDetails: &endpoint.PromptTokensDetails{CachedTokens: 40, AudioTokens: 5, CacheWriteTokens: 20},
			CompletionTokensDetails: &endpoint.CompletionTokensDetails{ReasoningTokens: 30, AudioTokens: 2,
				AcceptedPredictionTokens: 3, RejectedPredictionTokens: 4}},
			`{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,` +
				`"prompt_tokens_details":{"cached_tokens":40,"audio_tokens":5,"cache_write_tokens":20},` +
				`"completion_tokens_details":{"reasoning_tokens":30,"audio_tokens":2,"accepted_prediction_tokens":3,"rejected_prediction_tokens":4}}`},
		{"zero details keep their main count", endpoint.Usage{PromptTokens: 1, CompletionTokens: 1,
			PromptTokensDetails: &endpoint.PromptTokensDetails{}, CompletionTokensDetails: &endpoint.CompletionTokensDetails{}},
			`{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}`},
		{"details over their counts", endpoint.Usage{PromptTokens: 10, CompletionTokens: 5,
			PromptTokensDetails:     &endpoint.PromptTokensDetails{CachedTokens: 8, AudioTokens: 50, CacheWriteTokens: 8},
			CompletionTokensDetails: &endpoint.CompletionTokensDetails{ReasoningTokens: 9, AudioTokens: -1, AcceptedPredictionTokens: math.MaxInt, RejectedPredictionTokens: 6}},
			`{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,` +
				`"prompt_tokens_details":{"cached_tokens":8,"audio_tokens":10,"cache_write_tokens":2},` +
				`"completion_tokens_details":{"reasoning_tokens":5,"accepted_prediction_tokens":5,"rejected_prediction_tokens":5}}`},
		{"out of range", endpoint.Usage{PromptTokens: math.MaxInt, CompletionTokens: -4,
			PromptTokensDetails: &endpoint.PromptTokensDetails{CachedTokens: math.MaxInt}},
			`{"prompt_tokens":2147483647,"completion_tokens":0,"total_tokens":2147483647,"prompt_tokens_details":{"cached_tokens":2147483647}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := tc.in
			n := in.Normalized()
			b, err := json.Marshal(n)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b))
			require.Equal(t, tc.in, in, "Normalized does not modify u")
			require.Equal(t, n, n.Normalized(), "normalized once is enough")
		})
	}
}

// TestUsageAccessors: Cached, CacheWrite and Reasoning are 0 without
// details.
func TestUsageAccessors(t *testing.T) {
	t.Parallel()
	var u endpoint.Usage
	require.Zero(t, u.Cached()+u.CacheWrite()+u.Reasoning())
	u = endpoint.Usage{PromptTokensDetails: &endpoint.PromptTokensDetails{CachedTokens: 1, CacheWriteTokens: 2},
		CompletionTokensDetails: &endpoint.CompletionTokensDetails{ReasoningTokens: 3}}
	require.Equal(t, []int{1, 2, 3}, []int{u.Cached(), u.CacheWrite(), u.Reasoning()})
}
