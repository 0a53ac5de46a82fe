package relay_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// The official SDK against a gateway that relays to a fake upstream:
// every call works as against the upstream itself.

func (g *gateway) sdk() openai.Client {
	return openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey(clientKey),
		option.WithMaxRetries(0), option.WithHTTPClient(g.srv.Client()))
}

func TestSDKChat(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    "pub-ok",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello")},
		Seed:     openai.Int(7),
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(c.ID, "chatcmpl-"))
	require.Equal(t, "pub-ok", c.Model)
	require.Equal(t, relaytest.Text(8), c.Choices[0].Message.Content)
	require.Equal(t, int64(19), c.Usage.TotalTokens)
	require.Equal(t, "7", string(upstreamSaw(t, g)["seed"]))

	tools, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:    "pub-tools",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object"},
		})},
	})
	require.NoError(t, err)
	require.Equal(t, "tool_calls", tools.Choices[0].FinishReason)
	require.Equal(t, "get_weather", tools.Choices[0].Message.ToolCalls[0].Function.Name)
}

func TestSDKChatStreaming(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	for _, model := range []string{"pub-ok", "pub-tools"} {
		stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
			Model:         shared.ChatModel(model),
			Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")},
			StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		})
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			require.True(t, acc.AddChunk(stream.Current()))
		}
		require.NoError(t, stream.Err())
		require.True(t, strings.HasPrefix(acc.ID, "chatcmpl-"))
		require.Equal(t, model, acc.Model)
		if model == "pub-ok" {
			require.Equal(t, relaytest.Text(8), acc.Choices[0].Message.Content)
			require.Equal(t, int64(19), acc.Usage.TotalTokens)
		} else {
			require.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
			require.Equal(t, `{"city":"Paris"}`, acc.Choices[0].Message.ToolCalls[0].Function.Arguments)
		}
	}
}

func TestSDKChatErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	cases := []struct {
		model  string
		status int
		code   string
	}{
		{"pub-status-400", 400, "invalid_value"},
		{"pub-status-429", 429, "rate_limit_exceeded"},
		{"pub-status-500", 502, "bad_gateway"},
	}
	for _, tc := range cases {
		_, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
			Model: shared.ChatModel(tc.model), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
		})
		var apiErr *openai.Error
		require.ErrorAs(t, err, &apiErr, tc.model)
		require.Equal(t, tc.status, apiErr.StatusCode)
		require.Equal(t, tc.code, apiErr.Code)
	}

	// A stream that breaks after its first chunks is an error for the SDK.
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model: "pub-die", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
	})
	chunks := 0
	for stream.Next() {
		chunks++
	}
	require.Positive(t, chunks)
	require.Error(t, stream.Err())
	require.Contains(t, stream.Err().Error(), "bad_gateway")
}

func TestSDKCompletions(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	prompt := openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say hi")}
	c, err := client.Completions.New(t.Context(), openai.CompletionNewParams{Model: "pub-ok", Prompt: prompt, Suffix: openai.String("!")})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(c.ID, "cmpl-"))
	require.Equal(t, relaytest.Text(8), c.Choices[0].Text)
	require.Equal(t, `"!"`, string(upstreamSaw(t, g)["suffix"]))

	stream := client.Completions.NewStreaming(t.Context(), openai.CompletionNewParams{Model: "pub-ok", Prompt: prompt})
	var text string
	for stream.Next() {
		if ch := stream.Current().Choices; len(ch) > 0 {
			text += ch[0].Text
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, relaytest.Text(8), text)
}

func TestSDKVideos(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	ctx := t.Context()

	// JSON, and multipart with a reference image (the SDK's way).
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef\x00\x00\x00\x00IEND\xaeB`\x82")
	params := openai.VideoNewParams{Model: "pub-ok", Prompt: "a paper boat", Seconds: "4", Size: "720x1280"}
	withFile := params
	withFile.InputReference = openai.VideoNewParamsInputReferenceUnion{OfFile: bytes.NewReader(png)}
	for _, p := range []openai.VideoNewParams{params, withFile} {
		v, err := client.Videos.NewAndPoll(ctx, p, 5)
		require.NoError(t, err)
		require.Equal(t, openai.VideoStatusCompleted, v.Status)
		require.True(t, strings.HasPrefix(v.ID, "task_"))
		require.Equal(t, openai.VideoModel("pub-ok"), v.Model)

		res, err := client.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, relaytest.VideoContent, string(b))

		res, err = client.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{Variant: openai.VideoDownloadContentParamsVariantThumbnail})
		require.NoError(t, err)
		b, _ = io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, relaytest.ThumbnailContent, string(b))
	}
	// The upload reached the upstream as the data URI of the image.
	var sawImage bool
	for _, r := range g.up.Requests() {
		if r.Method == http.MethodPost && bytes.Contains(r.Body, []byte(`"input_reference":{"image_url":"data:image/png;base64,`)) {
			sawImage = true
		}
	}
	require.True(t, sawImage)

	// A task that fails upstream is a failed task for the SDK, with the
	// upstream's code and message.
	v, err := client.Videos.NewAndPoll(ctx, openai.VideoNewParams{Model: "pub-video-fail", Prompt: "x"}, 5)
	require.NoError(t, err)
	require.Equal(t, openai.VideoStatusFailed, v.Status)
	require.Equal(t, "content_policy", v.Error.Code)
	require.Equal(t, "The prompt was rejected.", v.Error.Message)
}

// TestSDKVideoRefusedUpstreamAtOnce: the SDK's Videos.New (multipart)
// gets the upstream's 400 at once, with its message and code, rather
// than a task that fails later; an upstream that refuses the gateway's
// key is a 502 that says so.
func TestSDKVideoRefusedUpstreamAtOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	for _, tc := range []struct {
		name   string
		params openai.VideoNewParams
		status int
		code   string
		msg    string
	}{
		{"BadSeconds", openai.VideoNewParams{Model: "pub-ok", Prompt: "x", Seconds: "5"}, 400, "invalid_value", "Invalid value: '5'. Supported values are: '4', '8', '12'."},
		{"BadSize", openai.VideoNewParams{Model: "pub-ok", Prompt: "x", Size: "999x999"}, 400, "invalid_value", "Invalid value: '999x999'. Supported values are: '640x360', '1280x720', '720x1280'."},
		{"MissingSize", openai.VideoNewParams{Model: "pub-video-size-required", Prompt: "x"}, 400, "invalid_value", "Missing required parameter: 'size'."},
		{"UnknownModelUpstream", openai.VideoNewParams{Model: "pub-video-unknown-model", Prompt: "x"}, 400, "model_not_found", "The model 'video-unknown-model' does not exist or you do not have access to it."},
		{"UnknownModel", openai.VideoNewParams{Model: "sora-9", Prompt: "x"}, 400, "model_not_found", `The model "sora-9" does not exist or you do not have access to it.`},
		{"UpstreamRefusesTheGatewaysKey", openai.VideoNewParams{Model: "pub-status-401", Prompt: "x"}, 502, "bad_gateway", "The upstream refused the gateway's credentials"},
	} {
		_, err := client.Videos.New(t.Context(), tc.params)
		var apiErr *openai.Error
		require.ErrorAs(t, err, &apiErr, tc.name)
		require.Equal(t, tc.status, apiErr.StatusCode, tc.name)
		require.Equal(t, tc.code, apiErr.Code, tc.name)
		require.Contains(t, apiErr.Message, tc.msg, tc.name)
	}
	g.requireNoTasks(t)
}

// TestSDKDoesNotRetryAnUpstreamRefusal: an upstream that refuses the
// gateway's key is a 502 for the SDK, with the gateway's message, and the
// SDK, which retries 5xx, does not retry it (X-Should-Retry: false), on
// chat, streamed or not, and responses.
func TestSDKDoesNotRetryAnUpstreamRefusal(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey(clientKey),
		option.WithMaxRetries(2), option.WithHTTPClient(g.srv.Client()))
	for _, model := range []string{"pub-" + relaytest.ModeStatus401, "pub-" + relaytest.ModeStatus403} {
		before := len(g.up.Requests())
		_, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
			Model: shared.ChatModel(model), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
		})
		var apiErr *openai.Error
		require.ErrorAs(t, err, &apiErr, model)
		require.Equal(t, 502, apiErr.StatusCode)
		require.Equal(t, "bad_gateway", apiErr.Code)
		require.Contains(t, apiErr.Message, "refused the gateway's credentials")

		stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
			Model: shared.ChatModel(model), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("x")},
		})
		for stream.Next() {
		}
		require.ErrorAs(t, stream.Err(), &apiErr, model)
		require.Equal(t, 502, apiErr.StatusCode)

		_, err = client.Responses.New(t.Context(), oresponses.ResponseNewParams{Model: model, Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("x")}})
		require.ErrorAs(t, err, &apiErr, model)
		require.Equal(t, 502, apiErr.StatusCode)
		require.Len(t, g.up.Requests(), before+3, "%s: one upstream request per call, none retried", model)
	}
}
