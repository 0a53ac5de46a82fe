package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
)

// TestFromResultUsage: the chat usage's cached prompt tokens are
// cachedContentTokenCount (a part of promptTokenCount, as Google counts
// it) and its reasoning tokens thoughtsTokenCount; without details
// neither is sent (issue 26).
func TestFromResultUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		usage chat.Usage
		want  string
	}{
		{"no details", chat.Usage{PromptTokens: 10, CompletionTokens: 5},
			`{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15}`},
		{"cached and reasoning", chat.Usage{PromptTokens: 100, CompletionTokens: 50,
			PromptTokensDetails:     &chat.PromptTokensDetails{CachedTokens: 60},
			CompletionTokensDetails: &chat.CompletionTokensDetails{ReasoningTokens: 20}},
			`{"promptTokenCount":100,"candidatesTokenCount":30,"totalTokenCount":150,"cachedContentTokenCount":60,"thoughtsTokenCount":20}`},
		{"cached over the prompt", chat.Usage{PromptTokens: 10, CompletionTokens: 5,
			PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: 60}},
			`{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15,"cachedContentTokenCount":10}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gemini.FromResult(&chat.Result{Choices: []chat.Output{{Content: "ok", FinishReason: chat.FinishStop}}, Usage: tc.usage}, "m", false)
			b, err := json.Marshal(r.UsageMetadata)
			require.NoError(t, err)
			require.Equal(t, tc.want, string(b))
		})
	}
}
