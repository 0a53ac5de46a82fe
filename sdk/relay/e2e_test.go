package relay_test

import (
	"bytes"
	"image/png"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// TestEndToEndThroughARelayToAGatewaykitServer: the official SDK against
// a relaying gateway in front of a gatewaykit server on the demo backends
// gets what it gets from that server directly: chat, completions,
// responses with previous_response_id, and videos through to the MP4 and
// its thumbnail.
func TestEndToEndThroughARelayToAGatewaykitServer(t *testing.T) {
	t.Parallel()
	list := append(demo.TextModels(), demo.VideoModels()...)
	catalog := models.NewMemoryCatalog(list...)
	tb := demo.NewTextBackend()
	upstream := kitServer(t, upstreamKey, catalog, tb.Chat(), tb.Completions(), tb.Responses(), demo.NewVideoGenerator(demo.WithVideoDuration(0)))

	var routes []relay.Route
	for _, m := range list {
		routes = append(routes, relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: upstream.URL + "/v1", Key: upstreamKey}}})
	}
	r, err := relay.New(routes, relay.WithPollInterval(5*time.Millisecond))
	require.NoError(t, err)
	gateway := kitServer(t, clientKey, catalog, r.Chat(), r.Completions(), r.Responses(), r.Videos())

	client := func(srv *httptest.Server, key string) openai.Client {
		return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey(key),
			option.WithMaxRetries(0), option.WithHTTPClient(srv.Client()))
	}
	direct, relayed := client(upstream, upstreamKey), client(gateway, clientKey)
	ctx := t.Context()

	// Chat, as JSON and streamed.
	params := openai.ChatCompletionNewParams{Model: demo.ChatModel, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello through the relay")}}
	want, err := direct.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	got, err := relayed.Chat.Completions.New(ctx, params)
	require.NoError(t, err)
	require.Equal(t, want.Choices[0].Message.Content, got.Choices[0].Message.Content)
	require.Equal(t, want.Usage.TotalTokens, got.Usage.TotalTokens)
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := relayed.Chat.Completions.NewStreaming(ctx, params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	require.NoError(t, stream.Err())
	require.Equal(t, want.Choices[0].Message.Content, acc.Choices[0].Message.Content)
	require.Equal(t, want.Usage.TotalTokens, acc.Usage.TotalTokens)

	// A reasoning model's reasoning, and tool calls.
	rp := openai.ChatCompletionNewParams{Model: demo.ReasonerModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Oslo?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")},
	}
	wantR1, err := direct.Chat.Completions.New(ctx, rp)
	require.NoError(t, err)
	gotR1, err := relayed.Chat.Completions.New(ctx, rp)
	require.NoError(t, err)
	require.Equal(t, wantR1.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw(), gotR1.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw())
	require.Equal(t, wantR1.Choices[0].Message.ToolCalls[0].Function.Arguments, gotR1.Choices[0].Message.ToolCalls[0].Function.Arguments)
	require.Equal(t, "tool_calls", gotR1.Choices[0].FinishReason)

	// The demo's failure in the middle of a stream is an error for the SDK
	// through the relay as well.
	fail := relayed.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: demo.ChatModel,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Please " + demo.DirectiveFail)}})
	for fail.Next() {
	}
	require.Error(t, fail.Err())

	// Completions.
	cp := openai.CompletionNewParams{Model: demo.ChatModel, Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Continue this")}}
	wantC, err := direct.Completions.New(ctx, cp)
	require.NoError(t, err)
	gotC, err := relayed.Completions.New(ctx, cp)
	require.NoError(t, err)
	require.Equal(t, wantC.Choices[0].Text, gotC.Choices[0].Text)

	// Responses, with previous_response_id kept by the relaying gateway.
	in := func(s string) oresponses.ResponseNewParamsInputUnion {
		return oresponses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
	}
	first, err := relayed.Responses.New(ctx, oresponses.ResponseNewParams{Model: demo.ChatModel, Input: in("My favourite colour is teal.")})
	require.NoError(t, err)
	second, err := relayed.Responses.New(ctx, oresponses.ResponseNewParams{Model: demo.ChatModel, Input: in("What did I tell you?"), PreviousResponseID: openai.String(first.ID)})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(second.OutputText(), `Earlier you said: "My favourite colour is teal."`), second.OutputText())
	rs := relayed.Responses.NewStreaming(ctx, oresponses.ResponseNewParams{Model: demo.ChatModel, Input: in("Stream it")})
	var final oresponses.Response
	for rs.Next() {
		if e, ok := rs.Current().AsAny().(oresponses.ResponseCompletedEvent); ok {
			final = e.Response
		}
	}
	require.NoError(t, rs.Err())
	wantR, err := direct.Responses.New(ctx, oresponses.ResponseNewParams{Model: demo.ChatModel, Input: in("Stream it")})
	require.NoError(t, err)
	require.Equal(t, wantR.OutputText(), final.OutputText())

	// Videos, through to the MP4 and the thumbnail.
	v, err := relayed.Videos.NewAndPoll(ctx, openai.VideoNewParams{Model: demo.VideoModelGeneral, Prompt: "a paper boat", Seconds: "4", Size: "1280x720"}, 5)
	require.NoError(t, err)
	require.Equal(t, openai.VideoStatusCompleted, v.Status)
	res, err := relayed.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
	require.NoError(t, err)
	mp4, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	require.True(t, bytes.Contains(mp4[:min(len(mp4), 64)], []byte("ftyp")), "an MP4")
	res, err = relayed.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{Variant: openai.VideoDownloadContentParamsVariantThumbnail})
	require.NoError(t, err)
	img, err := png.Decode(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Positive(t, img.Bounds().Dx())
}
