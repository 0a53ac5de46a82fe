package relay_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
)

// TestAnthropicUpstreamResponses: the official OpenAI client's responses
// reach a model whose upstream speaks the messages format: a stored
// conversation continued, a stream, and a function call.
func TestAnthropicUpstreamResponses(t *testing.T) {
	t.Parallel()
	f := newFakeAnthropic(t)
	r, err := relay.New([]relay.Route{{Model: "claude", Upstreams: []relay.Upstream{{BaseURL: f.srv.URL + "/v1", Key: anthropicKey, Model: "claude-up", API: relay.APIAnthropic}}}})
	require.NoError(t, err)
	catalog := models.NewMemoryCatalog(models.Model{ID: "claude", EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	mux := httptestMux(responses.NewHandler(catalog, r.Responses(), endpoint.WithKeepAlive(0)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := openaiClient(srv).Responses

	first, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: "claude", Instructions: openai.String("Be brief."),
		Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("My colour is teal.")}})
	require.NoError(t, err)
	require.Equal(t, "Hello from claude-up.", first.OutputText())
	require.EqualValues(t, 18, first.Usage.TotalTokens)
	require.Equal(t, "reasoning", first.Output[0].Type, "thinking comes back as a reasoning item")

	_, err = c.New(t.Context(), oresponses.ResponseNewParams{Model: "claude", PreviousResponseID: openai.String(first.ID),
		Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("What is it?")}})
	require.NoError(t, err)
	up, _ := f.lastRequest()
	require.Len(t, up.Messages, 3, "the conversation goes upstream whole")
	require.Equal(t, "My colour is teal.", up.Messages[0].Content.String())
	require.Equal(t, "assistant", up.Messages[1].Role)
	require.Equal(t, "Hello from claude-up.", up.Messages[1].Content.String())

	stream := c.NewStreaming(t.Context(), oresponses.ResponseNewParams{Model: "claude",
		Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Tools: []oresponses.ToolUnionParam{{OfFunction: &oresponses.FunctionToolParam{Name: "get_weather",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}},
	})
	var text strings.Builder
	var final oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseTextDeltaEvent:
			text.WriteString(e.Delta)
		case oresponses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, "Hello from claude-up.", text.String())
	require.Equal(t, "completed", string(final.Status))
	var kinds []string
	for _, o := range final.Output {
		kinds = append(kinds, o.Type)
	}
	require.Equal(t, []string{"reasoning", "message", "function_call"}, kinds)
	call := final.Output[2].AsFunctionCall()
	require.Equal(t, "get_weather", call.Name)
	require.Equal(t, "toolu_up1", call.CallID)
	require.JSONEq(t, `{"city":"Paris"}`, call.Arguments)
	require.EqualValues(t, 15, final.Usage.InputTokens)
	require.EqualValues(t, 6, final.Usage.OutputTokens)
}

// httptestMux mounts the responses handler's routes.
func httptestMux(h http.Handler) *http.ServeMux {
	mux := http.NewServeMux()
	responses.Register(mux, h)
	return mux
}
