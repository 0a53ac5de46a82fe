package relay_test

import (
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
)

var updateGemini = flag.Bool("update-gemini", false, "update the golden files of testdata/geminiup")

// geminiGateway is a chat gateway in front of a fake Gemini-format
// upstream: "g-<mode>" is relayed to the upstream model <mode>, with the
// API gemini; "mixed-gemini-first" fails over from a Gemini upstream
// that answers 500 to an OpenAI-format one, and "mixed-openai-first" the
// other way round.
type geminiGateway struct {
	up     *relaytest.GeminiUpstream
	openai *relaytest.Upstream
	srv    *httptest.Server
	keys   *auth.MemoryKeyStore
}

func newGeminiGateway(t *testing.T) *geminiGateway {
	t.Helper()
	up := relaytest.NewGeminiUpstream()
	up.Key = upstreamKey
	t.Cleanup(up.Close)
	oa := relaytest.NewUpstream()
	oa.Key = upstreamKey
	t.Cleanup(oa.Close)
	var routes []relay.Route
	var list []models.Model
	add := func(model string, ups ...relay.Upstream) {
		routes = append(routes, relay.Route{Model: model, Upstreams: ups})
		m := models.Model{ID: model, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}}
		if strings.Contains(model, relaytest.ModeReasoning) {
			m.Reasoning = true
		}
		list = append(list, m)
	}
	gem := func(mode string) relay.Upstream {
		return relay.Upstream{BaseURL: up.BaseURL(), Key: upstreamKey, Model: mode, API: relay.APIGemini}
	}
	for _, m := range []string{relaytest.ModeOK, relaytest.ModeTools, relaytest.ModeReasoning, relaytest.ModeNoDone,
		relaytest.ModeErrorEvent, relaytest.ModeStatus400, relaytest.ModeStatus429, relaytest.ModeStatus500} {
		add("g-"+m, gem(m))
	}
	add("g-badkey", relay.Upstream{BaseURL: up.BaseURL(), Key: "sk-wrong-upstream-key", Model: relaytest.ModeOK, API: relay.APIGemini})
	add("g-via-v1", relay.Upstream{BaseURL: up.URL + "/v1", Key: upstreamKey, Model: relaytest.ModeOK, API: relay.APIGemini})
	add("mixed-gemini-first", gem(relaytest.ModeStatus500), relay.Upstream{BaseURL: oa.BaseURL(), Key: upstreamKey, Model: relaytest.ModeOK})
	add("mixed-openai-first", relay.Upstream{BaseURL: oa.BaseURL(), Key: upstreamKey, Model: relaytest.ModeStatus500}, gem(relaytest.ModeOK))
	r, err := relay.New(routes)
	require.NoError(t, err)
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "key_test", Quota: auth.LimitedQuota(quota)}))
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(list...)
	chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
	responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
	srv := httptest.NewServer(auth.Middleware(keys)(relay.ForwardHeaders(mux)))
	t.Cleanup(srv.Close)
	return &geminiGateway{up: up, openai: oa, srv: srv, keys: keys}
}

func (g *geminiGateway) sdk() openai.Client {
	return openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey(clientKey),
		option.WithMaxRetries(0), option.WithHTTPClient(g.srv.Client()))
}

func TestGeminiUpstreamChat(t *testing.T) {
	t.Parallel()
	g := newGeminiGateway(t)
	client := g.sdk()
	tests := []struct {
		model, content, reasoning, finish string
		prompt, completion, reasoned      int64
	}{
		{model: "g-ok", content: relaytest.Text(8), finish: "stop", prompt: relaytest.PromptTokens, completion: 8},
		{model: "g-via-v1", content: relaytest.Text(8), finish: "stop", prompt: relaytest.PromptTokens, completion: 8},
		{model: "g-reasoning", content: relaytest.Text(8), reasoning: relaytest.GeminiThought, finish: "stop", prompt: relaytest.PromptTokens, completion: 12, reasoned: 4},
		{model: "mixed-gemini-first", content: relaytest.Text(8), finish: "stop", prompt: relaytest.PromptTokens, completion: 8},
		{model: "mixed-openai-first", content: relaytest.Text(8), finish: "stop", prompt: relaytest.PromptTokens, completion: 8},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			params := openai.ChatCompletionNewParams{
				Model:    shared.ChatModel(tc.model),
				Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello")},
			}
			c, err := client.Chat.Completions.New(t.Context(), params)
			require.NoError(t, err)
			require.Equal(t, tc.model, c.Model)
			require.Equal(t, tc.content, c.Choices[0].Message.Content)
			require.Equal(t, tc.finish, c.Choices[0].FinishReason)
			require.Equal(t, tc.prompt, c.Usage.PromptTokens)
			require.Equal(t, tc.completion, c.Usage.CompletionTokens)
			require.Equal(t, tc.prompt+tc.completion, c.Usage.TotalTokens)
			require.Equal(t, tc.reasoned, c.Usage.CompletionTokensDetails.ReasoningTokens)
			if tc.reasoning != "" {
				require.Equal(t, tc.reasoning, c.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw()[1:len(tc.reasoning)+1])
			}

			stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
				Model: params.Model, Messages: params.Messages,
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
			})
			acc := openai.ChatCompletionAccumulator{}
			chunks := 0
			for stream.Next() {
				require.True(t, acc.AddChunk(stream.Current()))
				chunks++
			}
			require.NoError(t, stream.Err())
			require.Greater(t, chunks, 3, "streamed event by event")
			require.True(t, strings.HasPrefix(acc.ID, "chatcmpl-"))
			require.Equal(t, tc.model, acc.Model)
			require.Equal(t, tc.content, acc.Choices[0].Message.Content)
			require.Equal(t, tc.finish, acc.Choices[0].FinishReason)
			require.Equal(t, tc.prompt+tc.completion, acc.Usage.TotalTokens)
		})
	}
}

func TestGeminiUpstreamToolRoundTrip(t *testing.T) {
	t.Parallel()
	g := newGeminiGateway(t)
	client := g.sdk()
	tools := []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	})}
	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}
	c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "g-tools", Messages: msgs, Tools: tools})
	require.NoError(t, err)
	require.Equal(t, "tool_calls", c.Choices[0].FinishReason)
	call := c.Choices[0].Message.ToolCalls[0]
	require.Equal(t, "get_weather", call.Function.Name)
	require.JSONEq(t, `{"city":"Paris"}`, call.Function.Arguments)
	require.True(t, strings.HasPrefix(call.ID, "call_"), call.ID)

	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{Model: "g-tools", Messages: msgs, Tools: tools,
		ToolChoice: openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}})
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		require.True(t, acc.AddChunk(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
	require.JSONEq(t, `{"city":"Paris"}`, acc.Choices[0].Message.ToolCalls[0].Function.Arguments)
	var sent map[string]any
	require.NoError(t, json.Unmarshal(g.up.Last().Body, &sent))
	require.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "ANY"}}, sent["toolConfig"])

	// The answer goes back as a functionResponse named after the call.
	msgs = append(msgs, c.Choices[0].Message.ToParam(), openai.ToolMessage(`{"temp":21}`, call.ID))
	_, err = client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "g-ok", Messages: msgs, Tools: tools})
	require.NoError(t, err)
	golden(t, "tool_round_trip.request.json", g.up.Last().Body)
	require.Equal(t, "/v1beta/models/ok:generateContent", g.up.Last().Path)
	require.Contains(t, call.ID, relaytest.GeminiSignature, "the signature travels in the call's id")

	// A history from another model has no signature: the call takes
	// Google's documented bypass.
	foreign := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?"),
		{OfAssistant: &openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "call_other", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Paris"}`}}}}}},
		openai.ToolMessage(`sunny`, "call_other")}
	_, err = client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{Model: "g-ok", Messages: foreign, Tools: tools})
	require.NoError(t, err)
	golden(t, "foreign_tool_call.request.json", g.up.Last().Body)
}

// golden compares got, a JSON document, with testdata/geminiup/name.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "geminiup", name)
	var v any
	require.NoError(t, json.Unmarshal(got, &v))
	pretty, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	if *updateGemini {
		require.NoError(t, os.WriteFile(path, append(pretty, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./sdk/relay -run Gemini -update-gemini")
	require.JSONEq(t, string(want), string(got))
}

func TestGeminiUpstreamRequestTranslation(t *testing.T) {
	t.Parallel()
	g := newGeminiGateway(t)
	body := `{"model":"g-ok","messages":[
		{"role":"system","content":"Be brief."},
		{"role":"developer","content":"Answer in French."},
		{"role":"user","content":[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},{"type":"image_url","image_url":{"url":"https://example.com/cat.webp"}}]},
		{"role":"assistant","content":"A cat."},
		{"role":"user","content":"Thanks"}],
		"max_completion_tokens":100,"temperature":0.5,"top_p":0.9,"n":1,"stop":["END"],"seed":7,"top_k":40,
		"presence_penalty":0.5,"frequency_penalty":0.25,"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object"}}},"stream":true}`
	res := post(t, g.srv, "/v1/chat/completions", body)
	require.Equal(t, 200, res.StatusCode)
	_ = events(t, res.Body)
	last := g.up.Last()
	require.Equal(t, "/v1beta/models/ok:streamGenerateContent?alt=sse", last.Path)
	require.Equal(t, upstreamKey, last.Header.Get("X-Goog-Api-Key"))
	require.Empty(t, last.Header.Get("Authorization"))
	golden(t, "translated.request.json", last.Body)
}

func post(t *testing.T, srv *httptest.Server, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+clientKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestGeminiUpstreamErrors(t *testing.T) {
	t.Parallel()
	g := newGeminiGateway(t)
	client := g.sdk()
	tests := []struct {
		model      string
		status     int
		code       string
		msg        string
		retryAfter string
		streamOnly bool // the error comes in the stream, after its first event
	}{
		{model: "g-status-400", status: 400, code: "invalid_request_error", msg: "Invalid value at 'generation_config.temperature'"},
		{model: "g-status-429", status: 429, code: "rate_limit_exceeded", msg: "You exceeded your current quota", retryAfter: "7"},
		{model: "g-status-500", status: 502, code: "bad_gateway", msg: "The upstream failed (HTTP 500)."},
		{model: "g-badkey", status: 502, code: "bad_gateway", msg: "refused the gateway's credentials"},
		{model: "g-no-done", status: 502, code: "bad_gateway", msg: "could not be read", streamOnly: true},
		{model: "g-error-event", status: 502, code: "bad_gateway", msg: "failed in the middle of the reply", streamOnly: true},
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			params := openai.ChatCompletionNewParams{Model: shared.ChatModel(tc.model), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}}
			if !tc.streamOnly {
				_, err := client.Chat.Completions.New(t.Context(), params)
				var apiErr *openai.Error
				require.True(t, errors.As(err, &apiErr), "%v", err)
				require.Equal(t, tc.status, apiErr.StatusCode)
				require.Contains(t, apiErr.Message, tc.msg)
				if tc.code == "invalid_request_error" {
					require.Equal(t, tc.code, apiErr.Type)
				} else {
					require.Equal(t, tc.code, apiErr.Code)
				}
				require.Equal(t, tc.retryAfter, apiErr.Response.Header.Get("Retry-After"))
				require.NotContains(t, apiErr.RawJSON(), upstreamKey)
			}
			stream := client.Chat.Completions.NewStreaming(t.Context(), params)
			for stream.Next() {
			}
			err := stream.Err()
			require.Error(t, err)
			var apiErr *openai.Error
			if errors.As(err, &apiErr) {
				require.Equal(t, tc.status, apiErr.StatusCode)
				require.Contains(t, apiErr.Message, tc.msg)
				return
			}
			require.True(t, tc.streamOnly, "%v", err)
			require.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestGeminiUpstreamResponses(t *testing.T) {
	t.Parallel()
	g := newGeminiGateway(t)
	client := g.sdk()
	for _, model := range []string{"g-ok", "g-reasoning", "mixed-gemini-first"} {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			params := oresponses.ResponseNewParams{Model: shared.ResponsesModel(model), Instructions: openai.String("Be brief."),
				Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Hello")}}
			r, err := client.Responses.New(t.Context(), params)
			require.NoError(t, err)
			require.Equal(t, oresponses.ResponseStatusCompleted, r.Status)
			require.Equal(t, relaytest.Text(8), r.OutputText())
			require.Equal(t, int64(relaytest.PromptTokens), r.Usage.InputTokens)

			stream := client.Responses.NewStreaming(t.Context(), params)
			var text strings.Builder
			var done oresponses.Response
			for stream.Next() {
				ev := stream.Current()
				switch ev.Type {
				case "response.output_text.delta":
					text.WriteString(ev.Delta)
				case "response.completed":
					done = ev.Response
				}
			}
			require.NoError(t, stream.Err())
			require.Equal(t, relaytest.Text(8), text.String())
			require.Equal(t, relaytest.Text(8), done.OutputText())
			require.Positive(t, done.Usage.TotalTokens)
		})
	}
	t.Run("tools", func(t *testing.T) {
		t.Parallel()
		params := oresponses.ResponseNewParams{Model: "g-tools", Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Weather?")},
			Tools: []oresponses.ToolUnionParam{{OfFunction: &oresponses.FunctionToolParam{Name: "get_weather", Parameters: map[string]any{"type": "object"}}}}}
		r, err := client.Responses.New(t.Context(), params)
		require.NoError(t, err)
		var call *oresponses.ResponseOutputItemUnion
		for i := range r.Output {
			if r.Output[i].Type == "function_call" {
				call = &r.Output[i]
			}
		}
		require.NotNil(t, call)
		require.Equal(t, "get_weather", call.Name)
		require.JSONEq(t, `{"city":"Paris"}`, call.Arguments.OfString)

		stream := client.Responses.NewStreaming(t.Context(), params)
		args := ""
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.function_call_arguments.done" {
				args = ev.Arguments
			}
		}
		require.NoError(t, stream.Err())
		require.JSONEq(t, `{"city":"Paris"}`, args)
	})
}
