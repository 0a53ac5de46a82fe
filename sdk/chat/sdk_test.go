package chat_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/sdk/internal/openaitest"
)

// newSDKClient starts a server like the example server's (auth middleware
// with an in-memory key store in front of the chat handler and the demo
// backend) and returns an official SDK client for it, using key.
func newSDKClient(t *testing.T, key func(secret string) string) openai.Client {
	t.Helper()
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(testCatalog(), demo.NewTextBackend().Chat()))
	return openaitest.NewSDKClient(t, mux, key)
}

func weatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name:        "get_weather",
		Description: openai.String("Weather of a city"),
		Parameters: shared.FunctionParameters{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
			"required":   []string{"city", "days"},
		},
	})
}

func TestSDKChatCompletionsNew(t *testing.T) {
	t.Parallel()
	client := newSDKClient(t, nil)
	c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    demo.ChatModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello, SDK!")},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(c.ID, chat.IDPrefix), c.ID)
	require.Equal(t, "chat.completion", string(c.Object))
	require.Equal(t, demo.ChatModel, c.Model)
	require.Len(t, c.Choices, 1)
	require.True(t, strings.HasPrefix(c.Choices[0].Message.Content, `You said: "Hello, SDK!".`), c.Choices[0].Message.Content)
	require.Equal(t, "stop", c.Choices[0].FinishReason)
	require.Equal(t, c.Usage.PromptTokens+c.Usage.CompletionTokens, c.Usage.TotalTokens)
	require.Equal(t, int64(demo.CountTokens(c.Choices[0].Message.Content)), c.Usage.CompletionTokens)
}

func TestSDKChatCompletionsNewWithReasoningAndTools(t *testing.T) {
	t.Parallel()
	client := newSDKClient(t, nil)
	c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:      demo.ReasonerModel,
		Messages:   []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools:      []openai.ChatCompletionToolUnionParam{weatherTool()},
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
	})
	require.NoError(t, err)
	msg := c.Choices[0].Message
	require.Equal(t, "tool_calls", c.Choices[0].FinishReason)
	require.False(t, msg.JSON.Content.Valid(), "content is null")
	require.Contains(t, msg.JSON.ExtraFields["reasoning_content"].Raw(), "get_weather")
	require.Len(t, msg.ToolCalls, 1)
	call := msg.ToolCalls[0].AsFunction()
	require.Equal(t, "get_weather", call.Function.Name)
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(call.Function.Arguments), &args))
	require.Equal(t, map[string]any{"city": "Weather in Paris?", "days": float64(1)}, args)
}

func TestSDKNewStreamingAccumulatesText(t *testing.T) {
	t.Parallel()
	for _, includeUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "WithoutUsage", true: "WithUsage"}[includeUsage], func(t *testing.T) {
			t.Parallel()
			client := newSDKClient(t, nil)
			params := openai.ChatCompletionNewParams{
				Model:    demo.ChatModel,
				N:        openai.Int(2),
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Stream to me.")},
			}
			want, err := client.Chat.Completions.New(t.Context(), params)
			require.NoError(t, err)

			if includeUsage {
				params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			stream := client.Chat.Completions.NewStreaming(t.Context(), params)
			acc := openai.ChatCompletionAccumulator{}
			chunks, finished := 0, make([]string, 2)
			for stream.Next() {
				require.True(t, acc.AddChunk(stream.Current()))
				for i := range finished {
					if content, ok := acc.JustFinishedContentForChoice(i); ok {
						require.Empty(t, finished[i], "choice %d finishes once", i)
						finished[i] = content
					}
				}
				chunks++
			}
			require.NoError(t, stream.Err())
			require.Greater(t, chunks, 10, "the reply comes in many chunks")
			require.True(t, strings.HasPrefix(acc.ID, chat.IDPrefix))
			require.Len(t, acc.Choices, 2)
			for i := range 2 {
				require.Equal(t, want.Choices[i].Message.Content, acc.Choices[i].Message.Content)
				require.Equal(t, want.Choices[i].Message.Content, finished[i], "JustFinishedContentForChoice(%d)", i)
				require.Equal(t, "stop", acc.Choices[i].FinishReason)
				require.Equal(t, "assistant", string(acc.Choices[i].Message.Role))
			}
			if includeUsage {
				require.Equal(t, want.Usage.TotalTokens, acc.Usage.TotalTokens)
				require.Equal(t, want.Usage.CompletionTokens, acc.Usage.CompletionTokens)
			} else {
				require.Zero(t, acc.Usage.TotalTokens)
			}
		})
	}
}

func TestSDKNewStreamingAccumulatesToolCalls(t *testing.T) {
	t.Parallel()
	for _, includeUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "WithoutUsage", true: "WithUsage"}[includeUsage], func(t *testing.T) {
			t.Parallel()
			client := newSDKClient(t, nil)
			params := openai.ChatCompletionNewParams{
				Model:    demo.ChatModel,
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Oslo?")},
				Tools:    []openai.ChatCompletionToolUnionParam{weatherTool()},
				ToolChoice: openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{
					Name: "get_weather",
				}),
			}
			if includeUsage {
				params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			}
			stream := client.Chat.Completions.NewStreaming(t.Context(), params)
			acc := openai.ChatCompletionAccumulator{}
			var finished []openai.FinishedChatCompletionToolCall
			for stream.Next() {
				require.True(t, acc.AddChunk(stream.Current()))
				if tc, ok := acc.JustFinishedToolCall(); ok {
					finished = append(finished, tc)
				}
			}
			require.NoError(t, stream.Err())
			require.Len(t, acc.Choices, 1)
			require.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
			require.Len(t, acc.Choices[0].Message.ToolCalls, 1)
			call := acc.Choices[0].Message.ToolCalls[0]
			require.True(t, strings.HasPrefix(call.ID, "call_"), call.ID)
			require.Equal(t, "get_weather", call.Function.Name)
			require.JSONEq(t, `{"city":"Weather in Oslo?","days":1}`, call.Function.Arguments)
			require.Len(t, finished, 1)
			require.Equal(t, call.ID, finished[0].ID)
			require.JSONEq(t, call.Function.Arguments, finished[0].Arguments)
			if includeUsage {
				require.Positive(t, acc.Usage.TotalTokens)
			} else {
				require.Zero(t, acc.Usage.TotalTokens)
			}
		})
	}
}

func TestSDKSeesAnErrorInTheMiddleOfAStream(t *testing.T) {
	t.Parallel()
	client := newSDKClient(t, nil)
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    demo.ChatModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Please [demo:fail].")},
	})
	chunks := 0
	for stream.Next() {
		chunks++
	}
	require.Equal(t, 1, chunks)
	require.ErrorContains(t, stream.Err(), "demo: simulated upstream failure")
}

func TestSDKSeesTheRightErrors(t *testing.T) {
	t.Parallel()
	user := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}
	tests := []struct {
		name       string
		key        func(string) string
		params     openai.ChatCompletionNewParams
		wantStatus int
		wantCode   string
		wantParam  string
		wantMsg    string
	}{
		{"bad input", nil, openai.ChatCompletionNewParams{Model: demo.ChatModel, Messages: user, Temperature: openai.Float(3)},
			400, "invalid_request_error", "temperature", "temperature must be at most 2, got 3"},
		{"bad key", func(string) string { return "sk-not-a-real-key" }, openai.ChatCompletionNewParams{Model: demo.ChatModel, Messages: user},
			401, "invalid_api_key", "", "Incorrect API key provided. You can find your API key on the key page of the user centre."},
		{"unknown model", nil, openai.ChatCompletionNewParams{Model: "gpt-9", Messages: user},
			404, "model_not_found", "model", `The model "gpt-9" does not exist or you do not have access to it.`},
		{"model lacking the endpoint type", nil, openai.ChatCompletionNewParams{Model: videoModel, Messages: user},
			400, "invalid_request_error", "model", `model "demo-video" does not support endpoint type "compat" (supported_endpoint_types: compat-video)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client := newSDKClient(t, tc.key)
			check := func(err error) {
				t.Helper()
				apiErr := openaitest.RequireAPIError(t, err, tc.wantStatus, tc.wantCode, tc.wantParam)
				require.Equal(t, tc.wantMsg, apiErr.Message)
			}
			_, err := client.Chat.Completions.New(t.Context(), tc.params)
			check(err)
			stream := client.Chat.Completions.NewStreaming(t.Context(), tc.params)
			require.False(t, stream.Next())
			check(stream.Err())
		})
	}
}
