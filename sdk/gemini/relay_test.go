package gemini_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// A relaying gateway in front of the demo gateway, three ways:
//
//   - "native" is relayed to the demo's "demo-chat" over an upstream whose
//     API is gemini: the relay's access handler passes the Gemini-style
//     requests through as they are, and the relay's chat backend
//     translates chat completions into them;
//   - "translated" is relayed over an OpenAI-format upstream: the
//     Gemini-style requests fall back to the gateway's own handler, which
//     translates them into chat completions that the relay forwards;
//   - "demo-chat" is not relayed: the gateway's handler serves it over its
//     own chat backend (the demo).
func newRelayed(t *testing.T) *httptest.Server {
	t.Helper()
	inner := httptest.NewServer(newGateway(t, nil))
	t.Cleanup(inner.Close)
	r, err := relay.New([]relay.Route{
		{Model: "native", Upstreams: []relay.Upstream{{BaseURL: inner.URL + "/v1", Key: "sk-demo", Model: "demo-chat", API: relay.APIGemini}}},
		{Model: "translated", Upstreams: []relay.Upstream{{BaseURL: inner.URL + "/v1", Key: "sk-demo", Model: "demo-chat"}}},
	})
	require.NoError(t, err)
	outer := newGateway(t, func(c *gateway.Config) {
		c.Relay = r
		c.Catalog = models.NewMemoryCatalog(append(demo.TextModels(),
			models.Model{ID: "native", EndpointTypes: []models.EndpointType{models.Compat}},
			models.Model{ID: "translated", EndpointTypes: []models.EndpointType{models.Compat}})...)
	})
	srv := httptest.NewServer(outer)
	t.Cleanup(srv.Close)
	return srv
}

func TestSDKThroughRelay(t *testing.T) {
	t.Parallel()
	srv := newRelayed(t)
	c := newSDK(t, srv.URL, "sk-demo")
	ctx := context.Background()
	for _, model := range []string{"native", "translated", "demo-chat"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			res, err := c.Models.GenerateContent(ctx, model, genai.Text("Hello relay"), nil)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(res.Text(), `You said: "Hello relay".`), res.Text())
			require.Equal(t, genai.FinishReasonStop, res.Candidates[0].FinishReason)
			require.Positive(t, res.UsageMetadata.TotalTokenCount)

			var text strings.Builder
			events := 0
			for res, err := range c.Models.GenerateContentStream(ctx, model, genai.Text("Hello relay"), nil) {
				require.NoError(t, err)
				text.WriteString(res.Text())
				events++
			}
			require.Greater(t, events, 3)
			require.True(t, strings.HasPrefix(text.String(), `You said: "Hello relay".`), text.String())

			cfg := &genai.GenerateContentConfig{
				Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: "lookup",
					Parameters: &genai.Schema{Type: genai.TypeObject, Required: []string{"q"}, Properties: map[string]*genai.Schema{"q": {Type: genai.TypeString}}}}}}},
				ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeAny}},
			}
			res, err = c.Models.GenerateContent(ctx, model, genai.Text("find it"), cfg)
			require.NoError(t, err)
			calls := res.FunctionCalls()
			require.Len(t, calls, 1)
			require.Equal(t, "lookup", calls[0].Name)
			require.Equal(t, "find it", calls[0].Args["q"])
			next := []*genai.Content{genai.NewContentFromText("find it", genai.RoleUser), res.Candidates[0].Content,
				genai.NewContentFromFunctionResponse("lookup", map[string]any{"found": true}, genai.RoleUser)}
			res, err = c.Models.GenerateContent(ctx, model, next, &genai.GenerateContentConfig{Tools: cfg.Tools})
			require.NoError(t, err)
			require.Contains(t, res.Text(), `The tool returned: "{"found":true}"`)
		})
	}
}

// TestOpenAISDKThroughNativeGeminiUpstream streams a chat completion with
// the official OpenAI SDK through a route whose upstream speaks the
// Gemini format (the demo gateway's generateContent).
func TestOpenAISDKThroughNativeGeminiUpstream(t *testing.T) {
	t.Parallel()
	srv := newRelayed(t)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-demo"), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:         "native",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello Gemini")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		require.True(t, acc.AddChunk(stream.Current()))
		chunks++
	}
	require.NoError(t, stream.Err())
	require.Greater(t, chunks, 3)
	require.Equal(t, "native", acc.Model)
	require.True(t, strings.HasPrefix(acc.Choices[0].Message.Content, `You said: "Hello Gemini".`), acc.Choices[0].Message.Content)
	require.Equal(t, "stop", acc.Choices[0].FinishReason)
	require.Positive(t, acc.Usage.PromptTokens)
	require.Equal(t, acc.Usage.PromptTokens+acc.Usage.CompletionTokens, acc.Usage.TotalTokens)
}
