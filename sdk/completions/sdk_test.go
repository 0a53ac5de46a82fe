package completions_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/sdk/internal/openaitest"
)

// newSDKClient starts a server like the example server's (auth middleware
// with an in-memory key store, the completions handler, the demo backend)
// and returns an official SDK client for it.
func newSDKClient(t *testing.T, key func(secret string) string) openai.Client {
	t.Helper()
	mux := http.NewServeMux()
	completions.Register(mux, completions.NewHandler(testCatalog(), demo.NewTextBackend().Completions()))
	return openaitest.NewSDKClient(t, mux, key)
}

func prompt(s ...string) openai.CompletionNewParamsPromptUnion {
	if len(s) == 1 {
		return openai.CompletionNewParamsPromptUnion{OfString: openai.String(s[0])}
	}
	return openai.CompletionNewParamsPromptUnion{OfArrayOfStrings: s}
}

func TestSDKCompletionsNew(t *testing.T) {
	t.Parallel()
	client := newSDKClient(t, nil)
	c, err := client.Completions.New(t.Context(), openai.CompletionNewParams{
		Model:     demo.ChatModel,
		Prompt:    prompt("Once upon a time", "In a galaxy"),
		N:         openai.Int(2),
		MaxTokens: openai.Int(10),
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(c.ID, completions.IDPrefix), c.ID)
	require.Equal(t, "text_completion", string(c.Object))
	require.Equal(t, demo.ChatModel, c.Model)
	require.Len(t, c.Choices, 4)
	for i, ch := range c.Choices {
		require.Equal(t, int64(i), ch.Index)
		require.Equal(t, "length", string(ch.FinishReason))
	}
	require.Equal(t, `Choice 1 of 2. You said: "Once`, c.Choices[0].Text)
	require.Equal(t, `Choice 2 of 2. You said: "In`, c.Choices[3].Text)
	require.Equal(t, int64(40), c.Usage.CompletionTokens)
	require.Equal(t, c.Usage.PromptTokens+c.Usage.CompletionTokens, c.Usage.TotalTokens)
}

func TestSDKCompletionsNewStreaming(t *testing.T) {
	t.Parallel()
	for _, includeUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "WithoutUsage", true: "WithUsage"}[includeUsage], func(t *testing.T) {
			t.Parallel()
			client := newSDKClient(t, nil)
			params := openai.CompletionNewParams{Model: demo.ChatModel, Prompt: prompt("Stream me"), N: openai.Int(2)}
			want, err := client.Completions.New(t.Context(), params)
			require.NoError(t, err)
			if includeUsage {
				params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			stream := client.Completions.NewStreaming(t.Context(), params)
			texts := make([]string, 2)
			finish := make([]string, 2)
			var usage openai.CompletionUsage
			var id string
			for stream.Next() {
				c := stream.Current()
				if id == "" {
					id = c.ID
				}
				require.Equal(t, id, c.ID)
				require.Empty(t, c.Model, "legacy chunks carry no model")
				if c.JSON.Usage.Valid() {
					usage = c.Usage
				}
				for _, ch := range c.Choices {
					texts[ch.Index] += ch.Text
					if ch.FinishReason != "" {
						finish[ch.Index] = string(ch.FinishReason)
					}
				}
			}
			require.NoError(t, stream.Err())
			for i := range 2 {
				require.Equal(t, want.Choices[i].Text, texts[i])
				require.Equal(t, "stop", finish[i])
			}
			if includeUsage {
				require.Equal(t, want.Usage.TotalTokens, usage.TotalTokens)
			} else {
				require.Zero(t, usage.TotalTokens)
			}
		})
	}
}

func TestSDKSeesTheRightErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		key        func(string) string
		params     openai.CompletionNewParams
		wantStatus int
		wantCode   string
		wantParam  string
	}{
		{"bad input", nil, openai.CompletionNewParams{Model: demo.ChatModel, Prompt: prompt("x"), MaxTokens: openai.Int(0)}, 400, "invalid_request_error", "max_tokens"},
		{"token prompt", nil, openai.CompletionNewParams{Model: demo.ChatModel, Prompt: openai.CompletionNewParamsPromptUnion{OfArrayOfTokens: []int64{1, 2}}}, 400, "invalid_request_error", "prompt"},
		{"bad key", func(string) string { return "sk-wrong" }, openai.CompletionNewParams{Model: demo.ChatModel, Prompt: prompt("x")}, 401, "invalid_api_key", ""},
		{"unknown model", nil, openai.CompletionNewParams{Model: "davinci-002", Prompt: prompt("x")}, 404, "model_not_found", "model"},
		{"model lacking the endpoint type", nil, openai.CompletionNewParams{Model: videoModel, Prompt: prompt("x")}, 400, "invalid_request_error", "model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := newSDKClient(t, tc.key)
			check := func(err error) {
				t.Helper()
				apiErr := openaitest.RequireAPIError(t, err, tc.wantStatus, tc.wantCode, tc.wantParam)
				require.NotEmpty(t, apiErr.Message)
			}
			_, err := client.Completions.New(t.Context(), tc.params)
			check(err)
			stream := client.Completions.NewStreaming(t.Context(), tc.params)
			require.False(t, stream.Next())
			check(stream.Err())
		})
	}
}

func TestSDKSeesAnErrorInTheMiddleOfAStream(t *testing.T) {
	t.Parallel()
	client := newSDKClient(t, nil)
	stream := client.Completions.NewStreaming(t.Context(), openai.CompletionNewParams{Model: demo.ChatModel, Prompt: prompt("[demo:fail]")})
	n := 0
	for stream.Next() {
		n++
	}
	require.Equal(t, 1, n)
	require.ErrorContains(t, stream.Err(), "demo: simulated upstream failure")
}
