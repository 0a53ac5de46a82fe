package fromchat_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
	"github.com/gatewaykit/gatewaykit/sdk/internal/openaitest"
)

// TestSDK drives the responses handler over the adapter over the demo's
// chat backend with the official OpenAI Go SDK: a response, a stored
// conversation continued, a streamed function call and its output sent
// back, and a refused hosted tool.
func TestSDK(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	var backend responses.Backend = fromchat.New(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Chat())
	responses.Register(mux, endpointtest.NewHandler(responses.NewHandler, endpointtest.Catalog(), backend))
	srv, secrets := openaitest.SDKServer(t, mux, auth.Key{ID: "key_sdk", Quota: auth.UnlimitedQuota()})
	c := openaitest.SDKClient(srv, secrets[0]).Responses
	text := func(s string) oresponses.ResponseNewParamsInputUnion {
		return oresponses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
	}

	first, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ReasonerModel, Input: text("My colour is teal."),
		Instructions: openai.String("Be brief.")})
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusCompleted, first.Status)
	require.Equal(t, []string{"reasoning", "message"}, []string{first.Output[0].Type, first.Output[1].Type})
	require.True(t, strings.HasPrefix(first.OutputText(), `You said: "My colour is teal.".`), first.OutputText())
	require.Positive(t, first.Usage.OutputTokensDetails.ReasoningTokens)
	require.Equal(t, first.Usage.InputTokens+first.Usage.OutputTokens, first.Usage.TotalTokens)

	second, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("What is it?"),
		PreviousResponseID: openai.String(first.ID)})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(second.OutputText(), `You said: "What is it?".`), second.OutputText())
	require.Greater(t, second.Usage.InputTokens, first.Usage.InputTokens, "the conversation reached the chat backend")

	tools := []oresponses.ToolUnionParam{{OfFunction: &oresponses.FunctionToolParam{Name: "get_weather",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}}}
	stream := c.NewStreaming(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("Weather in Oslo?"), Tools: tools,
		ToolChoice: oresponses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(oresponses.ToolChoiceOptionsRequired)}})
	var args strings.Builder
	var final oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseFunctionCallArgumentsDeltaEvent:
			args.WriteString(e.Delta)
		case oresponses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	require.NoError(t, stream.Err())
	call := final.Output[0].AsFunctionCall()
	require.Equal(t, "get_weather", call.Name)
	require.Equal(t, args.String(), call.Arguments)

	out := oresponses.ResponseInputItemParamOfFunctionCallOutput(`{"temperature":"-2 C"}`)
	out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	answer, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, PreviousResponseID: openai.String(final.ID), Tools: tools,
		Input: oresponses.ResponseNewParamsInputUnion{OfInputItemList: oresponses.ResponseInputParam{out}}})
	require.NoError(t, err)
	require.Contains(t, answer.OutputText(), `The tool returned: "{"temperature":"-2 C"}".`)

	_, err = c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("Search."),
		Tools: []oresponses.ToolUnionParam{{OfWebSearch: &oresponses.WebSearchToolParam{Type: oresponses.WebSearchToolTypeWebSearch}}}})
	apiErr := openaitest.RequireAPIError(t, err, 400, "invalid_request_error", "tools[0].type")
	require.Equal(t, `tools[0]: "web_search" tools are not supported by this model`, apiErr.Message)
}
