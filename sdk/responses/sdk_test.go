package responses_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sdk/internal/openaitest"
)

// sdkServer is a server like the example server's (auth middleware with
// an in-memory key store in front of the responses handler and the demo
// backend), with two keys of different accounts.
type sdkServer struct {
	srv          *httptest.Server
	alice, other string // secrets
}

func newSDKServer(t *testing.T) *sdkServer {
	t.Helper()
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(testCatalog(), demo.NewTextBackend().Responses()))
	srv, secrets := openaitest.SDKServer(t, mux,
		auth.Key{ID: "key_alice", Owner: "alice", Quota: auth.UnlimitedQuota()},
		auth.Key{ID: "key_bob", Owner: "bob", Quota: auth.UnlimitedQuota()})
	return &sdkServer{srv: srv, alice: secrets[0], other: secrets[1]}
}

// client returns an official SDK client using secret.
func (s *sdkServer) client(secret string) *oresponses.ResponseService {
	c := openaitest.SDKClient(s.srv, secret)
	return &c.Responses
}

func text(s string) oresponses.ResponseNewParamsInputUnion {
	return oresponses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

func weatherTool() oresponses.ToolUnionParam {
	return oresponses.ToolUnionParam{OfFunction: &oresponses.FunctionToolParam{
		Name:        "get_weather",
		Description: openai.String("Weather of a city"),
		Parameters: map[string]any{
			"type":       "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}, "days": map[string]any{"type": "integer"}},
			"required":   []string{"city", "days"},
		},
	}}
}

func TestSDKResponsesNew(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	resp, err := s.client(s.alice).New(t.Context(), oresponses.ResponseNewParams{
		Model:        demo.ChatModel,
		Input:        text("Hello, SDK!"),
		Instructions: openai.String("Be brief."),
		Temperature:  openai.Float(0.5),
		Metadata:     map[string]string{"topic": "sdk"},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(resp.ID, responses.IDPrefix), resp.ID)
	require.Equal(t, "response", string(resp.Object))
	require.Equal(t, oresponses.ResponseStatusCompleted, resp.Status)
	require.Equal(t, demo.ChatModel, resp.Model)
	require.True(t, strings.HasPrefix(resp.OutputText(), `You said: "Hello, SDK!".`), resp.OutputText())
	require.Len(t, resp.Output, 1)
	msg := resp.Output[0].AsMessage()
	require.True(t, strings.HasPrefix(msg.ID, responses.MessageIDPrefix), msg.ID)
	require.Equal(t, "assistant", string(msg.Role))
	require.Equal(t, "Be brief.", resp.Instructions.OfString)
	require.Equal(t, 0.5, resp.Temperature)
	require.Equal(t, "sdk", resp.Metadata["topic"])
	require.Equal(t, "true", resp.JSON.ExtraFields["store"].Raw())
	require.True(t, resp.ParallelToolCalls)
	require.Equal(t, resp.Usage.InputTokens+resp.Usage.OutputTokens, resp.Usage.TotalTokens)
	require.Equal(t, int64(demo.CountTokens(resp.OutputText())), resp.Usage.OutputTokens)
	require.False(t, resp.JSON.Error.Valid(), "error is null")
}

func TestSDKResponsesNewIncomplete(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	resp, err := s.client(s.alice).New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel, Input: text("Count for me."), MaxOutputTokens: openai.Int(12),
	})
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusIncomplete, resp.Status)
	require.Equal(t, "max_output_tokens", resp.IncompleteDetails.Reason)
	require.Equal(t, int64(12), resp.Usage.OutputTokens)
	require.Equal(t, int64(12), resp.MaxOutputTokens)
}

func TestSDKResponsesNewStreaming(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	for _, capped := range []bool{false, true} {
		params := oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("Stream to me, SDK.")}
		if capped {
			params.MaxOutputTokens = openai.Int(20)
		}
		stream := s.client(s.alice).NewStreaming(t.Context(), params)
		var deltas strings.Builder
		var final oresponses.Response
		var types []string
		terminal := 0
		for stream.Next() {
			ev := stream.Current()
			types = append(types, ev.Type)
			switch e := ev.AsAny().(type) {
			case oresponses.ResponseTextDeltaEvent:
				deltas.WriteString(e.Delta)
			case oresponses.ResponseTextDoneEvent:
				require.Equal(t, deltas.String(), e.Text)
			case oresponses.ResponseCompletedEvent:
				final, terminal = e.Response, terminal+1
			case oresponses.ResponseIncompleteEvent:
				final, terminal = e.Response, terminal+1
			}
		}
		require.NoError(t, stream.Err())
		require.NoError(t, stream.Close())
		require.Equal(t, 1, terminal, "exactly one terminal event")
		require.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}, types[:4])
		require.Equal(t, []string{"response.output_text.done", "response.content_part.done", "response.output_item.done"}, types[len(types)-4:len(types)-1])
		require.Equal(t, deltas.String(), final.OutputText(), "the concatenated deltas are the final text")
		require.Positive(t, final.Usage.TotalTokens, "the terminal event carries the usage")
		require.Equal(t, final.Usage.InputTokens+final.Usage.OutputTokens, final.Usage.TotalTokens)
		if capped {
			require.Equal(t, oresponses.ResponseStatusIncomplete, final.Status)
			require.Equal(t, "response.incomplete", types[len(types)-1])
		} else {
			require.Equal(t, oresponses.ResponseStatusCompleted, final.Status)
			require.True(t, strings.HasSuffix(final.OutputText(), "twenty."))
		}

		// The streamed response was stored as it ended.
		got, err := s.client(s.alice).Get(t.Context(), final.ID, oresponses.ResponseGetParams{})
		require.NoError(t, err)
		require.Equal(t, final.OutputText(), got.OutputText())
		require.Equal(t, final.Status, got.Status)
	}
}

func TestSDKStreamingFailure(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	stream := s.client(s.alice).NewStreaming(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("Break [demo:fail]")})
	var failed *oresponses.Response
	for stream.Next() {
		if e, ok := stream.Current().AsAny().(oresponses.ResponseFailedEvent); ok {
			failed = &e.Response
		}
	}
	require.NoError(t, stream.Err(), "a response.failed event is an event, not a transport error")
	require.NotNil(t, failed)
	require.Equal(t, oresponses.ResponseStatusFailed, failed.Status)
	require.Equal(t, "bad_gateway", string(failed.Error.Code))
	require.Contains(t, failed.Error.Message, "simulated upstream failure")
}

func TestSDKMultiTurnConversation(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	c := s.client(s.alice)
	first, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("My favourite colour is teal.")})
	require.NoError(t, err)
	second, err := c.New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel, Input: text("What did I tell you?"), PreviousResponseID: openai.String(first.ID),
	})
	require.NoError(t, err)
	require.Equal(t, first.ID, second.PreviousResponseID)
	require.True(t, strings.HasPrefix(second.OutputText(), `Earlier you said: "My favourite colour is teal." (1 earlier message). You said: "What did I tell you?".`), second.OutputText())
	require.Greater(t, second.Usage.InputTokens, first.Usage.InputTokens+first.Usage.OutputTokens-1, "the earlier turn counts as input")

	// Another account cannot continue it, nor see it.
	_, err = s.client(s.other).New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel, Input: text("Hi"), PreviousResponseID: openai.String(first.ID),
	})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 400, apiErr.StatusCode)
	require.Equal(t, "previous_response_id", apiErr.Param)
	_, err = s.client(s.other).Get(t.Context(), first.ID, oresponses.ResponseGetParams{})
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 404, apiErr.StatusCode)
}

func TestSDKFunctionCallRoundTrip(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	c := s.client(s.alice)
	resp, err := c.New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel,
		Input: text("What is the weather in Paris? Use get_weather."),
		Tools: []oresponses.ToolUnionParam{weatherTool()},
	})
	require.NoError(t, err)
	require.Len(t, resp.Output, 1)
	call := resp.Output[0].AsFunctionCall()
	require.Equal(t, "function_call", string(call.Type))
	require.Equal(t, "get_weather", call.Name)
	require.True(t, strings.HasPrefix(call.ID, responses.FunctionIDPrefix), call.ID)
	require.True(t, strings.HasPrefix(call.CallID, responses.CallIDPrefix), call.CallID)
	var args map[string]any
	require.NoError(t, json.Unmarshal([]byte(call.Arguments), &args))
	require.Equal(t, float64(1), args["days"])

	out := oresponses.ResponseInputItemParamOfFunctionCallOutput(`{"temperature":"18 C"}`)
	out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	final, err := c.New(t.Context(), oresponses.ResponseNewParams{
		Model:              demo.ChatModel,
		Input:              oresponses.ResponseNewParamsInputUnion{OfInputItemList: oresponses.ResponseInputParam{out}},
		PreviousResponseID: openai.String(resp.ID),
		Tools:              []oresponses.ToolUnionParam{weatherTool()},
	})
	require.NoError(t, err)
	require.Equal(t, oresponses.ResponseStatusCompleted, final.Status)
	require.Contains(t, final.OutputText(), `The tool returned: "{"temperature":"18 C"}".`)
}

func TestSDKStreamedFunctionCall(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	stream := s.client(s.alice).NewStreaming(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel, Input: text("Weather in Oslo?"), Tools: []oresponses.ToolUnionParam{weatherTool()},
		ToolChoice: oresponses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(oresponses.ToolChoiceOptionsRequired)},
	})
	var args strings.Builder
	var done oresponses.ResponseFunctionCallArgumentsDoneEvent
	var final oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseFunctionCallArgumentsDeltaEvent:
			args.WriteString(e.Delta)
		case oresponses.ResponseFunctionCallArgumentsDoneEvent:
			done = e
		case oresponses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, args.String(), done.Arguments)
	require.Equal(t, done.Arguments, final.Output[0].AsFunctionCall().Arguments)
	require.Equal(t, "get_weather", final.Output[0].AsFunctionCall().Name)
}

func TestSDKResponsesGetAndDelete(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	c := s.client(s.alice)
	resp, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("Keep me.")})
	require.NoError(t, err)
	got, err := c.Get(t.Context(), resp.ID, oresponses.ResponseGetParams{})
	require.NoError(t, err)
	require.Equal(t, resp.RawJSON(), got.RawJSON(), "GET returns the response as it was sent")

	require.NoError(t, c.Delete(t.Context(), resp.ID))
	_, err = c.Get(t.Context(), resp.ID, oresponses.ResponseGetParams{})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 404, apiErr.StatusCode)
	require.Equal(t, "not_found", apiErr.Code)
	err = c.Delete(t.Context(), resp.ID)
	require.True(t, errors.As(err, &apiErr) && apiErr.StatusCode == 404, "%v", err)
}

func TestSDKResponsesCompact(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	c := s.client(s.alice)
	first, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: demo.ChatModel, Input: text("The code word is falcon.")})
	require.NoError(t, err)
	compacted, err := c.Compact(t.Context(), oresponses.ResponseCompactParams{
		Model:              oresponses.ResponseCompactParamsModel(demo.ChatModel),
		PreviousResponseID: openai.String(first.ID),
	})
	require.NoError(t, err)
	require.Equal(t, "response.compaction", string(compacted.Object))
	require.Len(t, compacted.Output, 2)
	user := compacted.Output[0].AsMessage()
	require.Equal(t, "user", string(user.Role))
	require.Equal(t, "The code word is falcon.", user.Content[0].Text)
	item := compacted.Output[1].AsCompaction()
	require.Equal(t, "compaction", string(item.Type))
	require.NotEmpty(t, item.EncryptedContent)
	require.Equal(t, compacted.Usage.InputTokens+compacted.Usage.OutputTokens, compacted.Usage.TotalTokens)

	// The compaction stands for the conversation in a new request.
	next, err := c.New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel,
		Input: oresponses.ResponseNewParamsInputUnion{OfInputItemList: oresponses.ResponseInputParam{
			oresponses.ResponseInputItemParamOfCompaction(item.EncryptedContent),
			oresponses.ResponseInputItemParamOfMessage("Which code word?", oresponses.EasyInputMessageRoleUser),
		}},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(next.OutputText(), `Earlier you said: "The code word is falcon."`), next.OutputText())
}

func TestSDKStructuredOutput(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	resp, err := s.client(s.alice).New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel,
		Input: text("A city, please."),
		Text: oresponses.ResponseTextConfigParam{Format: oresponses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &oresponses.ResponseFormatTextJSONSchemaConfigParam{
				Name: "city",
				Schema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}, "population": map[string]any{"type": "integer"}},
					"required":   []string{"name", "population"},
				},
			},
		}},
	})
	require.NoError(t, err)
	var city struct {
		Name       string `json:"name"`
		Population int    `json:"population"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp.OutputText()), &city), resp.OutputText())
	require.True(t, strings.HasPrefix(city.Name, `You said: "A city, please."`), city.Name)
	require.Equal(t, 1, city.Population)
	require.Equal(t, "json_schema", resp.Text.Format.Type)
	require.Equal(t, "city", resp.Text.Format.Name)
}

func TestSDKReasoningItems(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	params := oresponses.ResponseNewParams{Model: demo.ReasonerModel, Input: text("Think it over.")}
	resp, err := s.client(s.alice).New(t.Context(), params)
	require.NoError(t, err)
	require.Len(t, resp.Output, 2)
	rs := resp.Output[0].AsReasoning()
	require.Equal(t, "reasoning", string(rs.Type))
	require.Len(t, rs.Summary, 1)
	require.True(t, strings.HasPrefix(rs.Summary[0].Text, "The prompt has"), rs.Summary[0].Text)
	require.Equal(t, int64(demo.CountTokens(rs.Summary[0].Text)), resp.Usage.OutputTokensDetails.ReasoningTokens)
	require.True(t, strings.HasPrefix(resp.OutputText(), `You said: "Think it over."`))

	stream := s.client(s.alice).NewStreaming(t.Context(), params)
	var summary strings.Builder
	var final oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseReasoningSummaryTextDeltaEvent:
			summary.WriteString(e.Delta)
		case oresponses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, rs.Summary[0].Text, summary.String())
	require.Equal(t, summary.String(), final.Output[0].AsReasoning().Summary[0].Text)
	require.Equal(t, resp.OutputText(), final.OutputText())
}

func TestSDKInputItemsList(t *testing.T) {
	t.Parallel()
	s := newSDKServer(t)
	c := openaitest.SDKClient(s.srv, s.alice)
	resp, err := c.Responses.New(t.Context(), oresponses.ResponseNewParams{
		Model: demo.ChatModel,
		Input: oresponses.ResponseNewParamsInputUnion{OfInputItemList: oresponses.ResponseInputParam{
			oresponses.ResponseInputItemParamOfMessage("First.", oresponses.EasyInputMessageRoleUser),
			oresponses.ResponseInputItemParamOfMessage("Second.", oresponses.EasyInputMessageRoleUser),
			oresponses.ResponseInputItemParamOfMessage("Third.", oresponses.EasyInputMessageRoleUser),
		}},
	})
	require.NoError(t, err)
	var texts []string
	iter := c.Responses.InputItems.ListAutoPaging(t.Context(), resp.ID, oresponses.InputItemListParams{
		Limit: openai.Int(2), Order: oresponses.InputItemListParamsOrderAsc,
	})
	for iter.Next() {
		msg := iter.Current().AsMessage()
		require.True(t, strings.HasPrefix(msg.ID, responses.MessageIDPrefix), msg.ID)
		require.Equal(t, "user", string(msg.Role))
		texts = append(texts, msg.Content[0].Text)
	}
	require.NoError(t, iter.Err())
	require.Equal(t, []string{"First.", "Second.", "Third."}, texts, "two pages, in order")
}
