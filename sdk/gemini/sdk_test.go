package gemini_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// The official Gen AI Go SDK (google.golang.org/genai) against the demo
// through gateway.New: generateContent, the SSE stream, a function call
// round trip and an error.

func newSDK(t *testing.T, base, key string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      key,
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: "v1beta"},
	})
	require.NoError(t, err)
	return c
}

func TestSDKGenerateContent(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(srv.Close)
	c := newSDK(t, srv.URL, "sk-demo")
	res, err := c.Models.GenerateContent(context.Background(), "demo-chat", genai.Text("Hello there"), &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("Be brief.", genai.RoleUser),
		MaxOutputTokens:   200,
		Temperature:       genai.Ptr[float32](0.5),
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Text(), `You said: "Hello there".`), res.Text())
	require.Len(t, res.Candidates, 1)
	require.Equal(t, genai.FinishReasonStop, res.Candidates[0].FinishReason)
	require.Equal(t, "demo-chat", res.ModelVersion)
	require.NotEmpty(t, res.ResponseID)
	u := res.UsageMetadata
	require.NotNil(t, u)
	require.Positive(t, u.PromptTokenCount)
	require.Positive(t, u.CandidatesTokenCount)
	require.Equal(t, u.PromptTokenCount+u.CandidatesTokenCount, u.TotalTokenCount)
}

func TestSDKGenerateContentMaxTokens(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(srv.Close)
	c := newSDK(t, srv.URL, "sk-demo")
	res, err := c.Models.GenerateContent(context.Background(), "demo-chat", genai.Text("Hello"), &genai.GenerateContentConfig{MaxOutputTokens: 5})
	require.NoError(t, err)
	require.Equal(t, genai.FinishReasonMaxTokens, res.Candidates[0].FinishReason)
	require.Equal(t, int32(5), res.UsageMetadata.CandidatesTokenCount)
}

func TestSDKStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(srv.Close)
	c := newSDK(t, srv.URL, "sk-demo")
	var text strings.Builder
	var events int
	var last *genai.GenerateContentResponse
	for res, err := range c.Models.GenerateContentStream(context.Background(), "demo-chat", genai.Text("Stream me"), nil) {
		require.NoError(t, err)
		events++
		text.WriteString(res.Text())
		last = res
	}
	require.Greater(t, events, 3, "the demo streams a token per event")
	require.True(t, strings.HasPrefix(text.String(), `You said: "Stream me".`), text.String())
	require.True(t, strings.HasSuffix(text.String(), "twenty."), text.String())
	require.NotNil(t, last.UsageMetadata)
	require.Equal(t, genai.FinishReasonStop, last.Candidates[0].FinishReason)
	require.Positive(t, last.UsageMetadata.TotalTokenCount)
}

func TestSDKStreamReasoningThoughts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(srv.Close)
	c := newSDK(t, srv.URL, "sk-demo")
	var thoughts, text strings.Builder
	var last *genai.GenerateContentResponse
	cfg := &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}}
	for res, err := range c.Models.GenerateContentStream(context.Background(), "demo-reasoner", genai.Text("Think"), cfg) {
		require.NoError(t, err)
		for _, p := range res.Candidates[0].Content.Parts {
			if p.Thought {
				thoughts.WriteString(p.Text)
			}
		}
		text.WriteString(res.Text())
		last = res
	}
	require.True(t, strings.HasPrefix(thoughts.String(), "The prompt has "), thoughts.String())
	require.True(t, strings.HasPrefix(text.String(), `You said: "Think".`), text.String())
	u := last.UsageMetadata
	require.Positive(t, u.ThoughtsTokenCount)
	require.Equal(t, u.PromptTokenCount+u.CandidatesTokenCount+u.ThoughtsTokenCount, u.TotalTokenCount)
}

func TestSDKFunctionCallRoundTrip(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(srv.Close)
	c := newSDK(t, srv.URL, "sk-demo")
	ctx := context.Background()
	cfg := &genai.GenerateContentConfig{
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name:        "get_weather",
			Description: "The weather of a city.",
			Parameters: &genai.Schema{Type: genai.TypeObject, Required: []string{"city"},
				Properties: map[string]*genai.Schema{"city": {Type: genai.TypeString}}},
		}}}},
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}},
	}
	history := genai.Text("What is the weather in Paris?")
	for _, stream := range []bool{false, true} {
		var calls []*genai.FunctionCall
		var content *genai.Content
		if stream {
			for res, err := range c.Models.GenerateContentStream(ctx, "demo-chat", history, cfg) {
				require.NoError(t, err)
				if fc := res.FunctionCalls(); len(fc) > 0 {
					calls = append(calls, fc...)
					content = res.Candidates[0].Content
				}
			}
		} else {
			res, err := c.Models.GenerateContent(ctx, "demo-chat", history, cfg)
			require.NoError(t, err)
			calls, content = res.FunctionCalls(), res.Candidates[0].Content
		}
		require.Len(t, calls, 1, "stream=%v", stream)
		require.Equal(t, "get_weather", calls[0].Name)
		require.Equal(t, "What is the weather in Paris?", calls[0].Args["city"])
		require.True(t, strings.HasPrefix(calls[0].ID, "call_"), calls[0].ID)

		// Answer the call and ask again, without forcing a call.
		next := append(append([]*genai.Content{}, history...), content,
			genai.NewContentFromParts([]*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				ID: calls[0].ID, Name: "get_weather", Response: map[string]any{"output": "sunny, 21°C"}}}}, genai.RoleUser))
		res, err := c.Models.GenerateContent(ctx, "demo-chat", next, &genai.GenerateContentConfig{Tools: cfg.Tools})
		require.NoError(t, err)
		require.Empty(t, res.FunctionCalls())
		require.Contains(t, res.Text(), `The tool returned: "{"output":"sunny, 21°C"}"`)
	}
}

func TestSDKErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	tests := []struct {
		name   string
		key    string
		model  string
		code   int
		status string
		msg    string
	}{
		{name: "unknown model", key: "sk-demo", model: "nope", code: 404, status: "NOT_FOUND", msg: "nope"},
		{name: "bad key", key: "sk-wrong", model: "demo-chat", code: 401, status: "UNAUTHENTICATED"},
		{name: "model without compat", key: "sk-demo", model: "demo-video", code: 400, status: "INVALID_ARGUMENT"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newSDK(t, srv.URL, tc.key)
			for _, stream := range []bool{false, true} {
				var err error
				if stream {
					for _, e := range c.Models.GenerateContentStream(ctx, tc.model, genai.Text("hi"), nil) {
						if e != nil {
							err = e
							break
						}
					}
				} else {
					_, err = c.Models.GenerateContent(ctx, tc.model, genai.Text("hi"), nil)
				}
				var api genai.APIError
				require.True(t, errors.As(err, &api), "stream=%v: %v", stream, err)
				require.Equal(t, tc.code, api.Code)
				require.Equal(t, tc.status, api.Status)
				require.Contains(t, api.Message, tc.msg)
			}
		})
	}
}
