package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

const invalid = apierrors.TypeInvalidRequest

func TestHandlerRejectsBadRequests(t *testing.T) {
	t.Parallel()
	const user = `"messages":[{"role":"user","content":"Hi"}]`
	tests := []struct {
		name        string
		body        string
		contentType string
		wantStatus  int
		wantBody    string
	}{
		{"empty body", ``, "", 400,
			errorBody("request body is empty; expected a JSON object", invalid, "", "invalid_request_error")},
		{"not JSON", `{"model":`, "", 400,
			errorBody("request body is not valid JSON: unexpected end of input", invalid, "", "invalid_request_error")},
		{"not an object", `[1]`, "", 400,
			errorBody("request body must be a JSON object, got array", invalid, "", "invalid_request_error")},
		{"two values", `{"model":"demo-chat",` + user + `} {}`, "", 400,
			errorBody("request body must hold a single JSON value", invalid, "", "invalid_request_error")},
		{"wrong content type", `{}`, "text/plain", 400,
			errorBody(`Content-Type must be application/json, got "text/plain"`, invalid, "", "invalid_request_error")},
		{"missing model", `{` + user + `}`, "", 400,
			errorBody("model is required", invalid, "model", "invalid_request_error")},
		{"model not a string", `{"model":7,` + user + `}`, "", 400,
			errorBody("model must be a string, got number", invalid, "model", "invalid_request_error")},
		{"missing messages", `{"model":"demo-chat"}`, "", 400,
			errorBody("messages is required", invalid, "messages", "invalid_request_error")},
		{"no messages", `{"model":"demo-chat","messages":[]}`, "", 400,
			errorBody("messages must hold at least 1 items", invalid, "messages", "invalid_request_error")},
		{"missing role", `{"model":"demo-chat","messages":[{"content":"Hi"}]}`, "", 400,
			errorBody("messages[0].role is required", invalid, "messages[0].role", "invalid_request_error")},
		{"bad role", `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"},{"role":"robot","content":"Hi"}]}`, "", 400,
			errorBody(`messages[1].role must be one of system, developer, user, assistant, tool, got "robot"`, invalid, "messages[1].role", "invalid_request_error")},
		{"missing content", `{"model":"demo-chat","messages":[{"role":"user"}]}`, "", 400,
			errorBody("messages[0].content is required", invalid, "messages[0].content", "invalid_request_error")},
		{"null content", `{"model":"demo-chat","messages":[{"role":"system","content":null}]}`, "", 400,
			errorBody("messages[0].content is required", invalid, "messages[0].content", "invalid_request_error")},
		{"content a number", `{"model":"demo-chat","messages":[{"role":"user","content":42}]}`, "", 400,
			errorBody("messages[0].content must be a string or an array of content parts, got number", invalid, "messages[0].content", "invalid_request_error")},
		{"content an object", `{"model":"demo-chat","messages":[{"role":"user","content":{"text":"Hi"}}]}`, "", 400,
			errorBody("messages[0].content must be a string or an array of content parts, got object", invalid, "messages[0].content", "invalid_request_error")},
		{"no content parts", `{"model":"demo-chat","messages":[{"role":"user","content":[]}]}`, "", 400,
			errorBody("messages[0].content must hold at least 1 items", invalid, "messages[0].content", "invalid_request_error")},
		{"part without type", `{"model":"demo-chat","messages":[{"role":"user","content":[{"text":"Hi"}]}]}`, "", 400,
			errorBody("messages[0].content[0].type is required", invalid, "messages[0].content[0].type", "invalid_request_error")},
		{"image without url", `{"model":"demo-chat","messages":[{"role":"user","content":[{"type":"text","text":"Hi"},{"type":"image_url","image_url":{}}]}]}`, "", 400,
			errorBody("messages[0].content[1].image_url.url is required", invalid, "messages[0].content[1].image_url.url", "invalid_request_error")},
		{"image with a bad url", `{"model":"demo-chat","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://example.com/a.png"}}]}]}`, "", 400,
			errorBody("messages[0].content[0].image_url.url must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)", invalid, "messages[0].content[0].image_url.url", "invalid_request_error")},
		{"image data URI that is not an image", `{"model":"demo-chat","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:text/plain;base64,aGk="}}]}]}`, "", 400,
			errorBody("messages[0].content[0].image_url.url must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)", invalid, "messages[0].content[0].image_url.url", "invalid_request_error")},
		{"tool message without tool_call_id", `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"},{"role":"tool","content":"42"}]}`, "", 400,
			errorBody("messages[1].tool_call_id is required", invalid, "messages[1].tool_call_id", "invalid_request_error")},
		{"tool call without id", `{"model":"demo-chat","messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, "", 400,
			errorBody("messages[0].tool_calls[0].id is required", invalid, "messages[0].tool_calls[0].id", "invalid_request_error")},
		{"tool call without name", `{"model":"demo-chat","messages":[{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"arguments":"{}"}}]}]}`, "", 400,
			errorBody("messages[0].tool_calls[0].function.name is required", invalid, "messages[0].tool_calls[0].function.name", "invalid_request_error")},
		{"temperature too high", `{"model":"demo-chat",` + user + `,"temperature":2.5}`, "", 400,
			errorBody("temperature must be at most 2, got 2.5", invalid, "temperature", "invalid_request_error")},
		{"temperature negative", `{"model":"demo-chat",` + user + `,"temperature":-0.1}`, "", 400,
			errorBody("temperature must be at least 0, got -0.1", invalid, "temperature", "invalid_request_error")},
		{"temperature a string", `{"model":"demo-chat",` + user + `,"temperature":"hot"}`, "", 400,
			errorBody("temperature must be a number, got string", invalid, "temperature", "invalid_request_error")},
		{"top_p too high", `{"model":"demo-chat",` + user + `,"top_p":1.5}`, "", 400,
			errorBody("top_p must be at most 1, got 1.5", invalid, "top_p", "invalid_request_error")},
		{"n zero", `{"model":"demo-chat",` + user + `,"n":0}`, "", 400,
			errorBody("n must be at least 1, got 0", invalid, "n", "invalid_request_error")},
		{"n too large", `{"model":"demo-chat",` + user + `,"n":129}`, "", 400,
			errorBody("n must be at most 128, got 129", invalid, "n", "invalid_request_error")},
		{"n not an integer", `{"model":"demo-chat",` + user + `,"n":1.5}`, "", 400,
			errorBody("n must be an integer, got number 1.5", invalid, "n", "invalid_request_error")},
		{"max_tokens zero", `{"model":"demo-chat",` + user + `,"max_tokens":0}`, "", 400,
			errorBody("max_tokens must be at least 1, got 0", invalid, "max_tokens", "invalid_request_error")},
		{"max_completion_tokens negative", `{"model":"demo-chat",` + user + `,"max_completion_tokens":-5}`, "", 400,
			errorBody("max_completion_tokens must be at least 1, got -5", invalid, "max_completion_tokens", "invalid_request_error")},
		{"five stop sequences", `{"model":"demo-chat",` + user + `,"stop":["a","b","c","d","e"]}`, "", 400,
			errorBody("stop must hold at most 4 items", invalid, "stop", "invalid_request_error")},
		{"stop a number", `{"model":"demo-chat",` + user + `,"stop":5}`, "", 400,
			errorBody("stop must be a string or an array of strings", invalid, "stop", "invalid_request_error")},
		{"stream not a boolean", `{"model":"demo-chat",` + user + `,"stream":"yes"}`, "", 400,
			errorBody("stream must be a boolean, got string", invalid, "stream", "invalid_request_error")},
		{"tool of another type", `{"model":"demo-chat",` + user + `,"tools":[{"type":"retrieval"}]}`, "", 400,
			errorBody(`tools[0].type must be one of function, got "retrieval"`, invalid, "tools[0].type", "invalid_request_error")},
		{"tool without function", `{"model":"demo-chat",` + user + `,"tools":[{"type":"function"}]}`, "", 400,
			errorBody("tools[0].function is required", invalid, "tools[0].function", "invalid_request_error")},
		{"tool without name", `{"model":"demo-chat",` + user + `,"tools":[{"type":"function","function":{"parameters":{}}}]}`, "", 400,
			errorBody("tools[0].function.name is required", invalid, "tools[0].function.name", "invalid_request_error")},
		{"tool_choice unknown string", `{"model":"demo-chat",` + user + `,"tool_choice":"always"}`, "", 400,
			errorBody(`tool_choice must be one of none, auto, required, or an object naming a function, got "always"`, invalid, "tool_choice", "invalid_request_error")},
		{"tool_choice a number", `{"model":"demo-chat",` + user + `,"tool_choice":1}`, "", 400,
			errorBody("tool_choice must be a string or an object, got number", invalid, "tool_choice", "invalid_request_error")},
		{"tool_choice object of another type", `{"model":"demo-chat",` + user + `,"tool_choice":{"type":"file_search"}}`, "", 400,
			errorBody(`tool_choice.type must be function, got "file_search"`, invalid, "tool_choice.type", "invalid_request_error")},
		{"tool_choice without name", `{"model":"demo-chat",` + user + `,"tool_choice":{"type":"function","function":{}}}`, "", 400,
			errorBody("tool_choice.function.name is required", invalid, "tool_choice.function.name", "invalid_request_error")},
		{"tool_choice required without tools", `{"model":"demo-chat",` + user + `,"tool_choice":"required"}`, "", 400,
			errorBody("tool_choice requires tools: it obliges the model to call one, and none are given", invalid, "tool_choice", "invalid_request_error")},
		{"tool_choice names an unknown function", `{"model":"demo-chat",` + user + `,"tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":{"type":"function","function":{"name":"b"}}}`, "", 400,
			errorBody(`tool_choice.function.name "b" names no function in tools`, invalid, "tool_choice.function.name", "invalid_request_error")},
		{"response_format of another type", `{"model":"demo-chat",` + user + `,"response_format":{"type":"xml"}}`, "", 400,
			errorBody(`response_format.type must be one of text, json_object, json_schema, got "xml"`, invalid, "response_format.type", "invalid_request_error")},
		{"json_schema without schema", `{"model":"demo-chat",` + user + `,"response_format":{"type":"json_schema"}}`, "", 400,
			errorBody("response_format.json_schema is required", invalid, "response_format.json_schema", "invalid_request_error")},
		{"json_schema without name", `{"model":"demo-chat",` + user + `,"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`, "", 400,
			errorBody("response_format.json_schema.name is required", invalid, "response_format.json_schema.name", "invalid_request_error")},
		{"unknown model", `{"model":"gpt-9",` + user + `}`, "", 404,
			errorBody(`The model "gpt-9" does not exist or you do not have access to it.`, invalid, "model", "model_not_found")},
		{"model without compat", `{"model":"demo-video",` + user + `}`, "", 400,
			errorBody(`model "demo-video" does not support endpoint type "compat" (supported_endpoint_types: compat-video)`, invalid, "model", "invalid_request_error")},
		{"backend failure", `{"model":"demo-chat","messages":[{"role":"user","content":"[demo:fail]"}]}`, "", 502,
			errorBody("demo: simulated upstream failure ([demo:fail])", apierrors.TypeUpstream, "", "bad_gateway")},
		{"backend failure before a stream starts", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"[demo:fail]"}]}`, "", 200,
			""}, // the demo fails after the first chunk: see the golden stream
	}
	h := newTestHandler()
	for _, tc := range tests {
		if tc.wantBody == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := post(t, h, tc.body, endpointtest.ContentType(tc.contentType))
			endpointtest.RequireJSON(t, w, tc.wantStatus, tc.wantBody)
		})
	}
}

func TestHandlerLimitsTheBody(t *testing.T) {
	t.Parallel()
	h := newTestHandler(endpoint.WithMaxRequestBytes(64))
	w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"`+strings.Repeat("a", 100)+`"}]}`)
	require.Equal(t, 400, w.Code)
	require.JSONEq(t, errorBody("request body is larger than the 64 bytes limit", invalid, "", "invalid_request_error"), w.Body.String())
}

func TestHandlerHidesModelsTheKeyMayNotUse(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	p := &auth.Principal{KeyID: "key_1", AllowedModels: []string{"demo-reasoner"}}
	w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`, func(r *http.Request) {
		*r = *r.WithContext(auth.WithPrincipal(r.Context(), p))
	})
	require.Equal(t, 404, w.Code)
	require.JSONEq(t, errorBody(`The model "demo-chat" does not exist or you do not have access to it.`, invalid, "model", "model_not_found"), w.Body.String())

	w = post(t, h, `{"model":"demo-reasoner","messages":[{"role":"user","content":"Hi"}]}`, func(r *http.Request) {
		*r = *r.WithContext(auth.WithPrincipal(r.Context(), p))
	})
	require.Equal(t, 200, w.Code, w.Body.String())
}

func TestWithAllowedNilAllowsEveryModel(t *testing.T) {
	t.Parallel()
	h := newTestHandler(endpoint.WithAllowed(nil))
	p := &auth.Principal{KeyID: "key_1", AllowedModels: []string{"demo-reasoner"}}
	w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`, func(r *http.Request) {
		*r = *r.WithContext(auth.WithPrincipal(r.Context(), p))
	})
	require.Equal(t, 200, w.Code, w.Body.String())
}

// funcBackend is a Backend made of a function; funcStreamingBackend
// adds the stream (its complete may be nil); deltas makes a stream
// function that yields the deltas given.
type (
	funcBackend          = endpointtest.FuncBackend[chat.Params, chat.Result]
	funcStreamingBackend = endpointtest.FuncStreamingBackend[chat.Params, chat.Result, chat.Delta]
)

var deltas = endpointtest.Deltas[chat.Params, chat.Delta]

func TestHandlerRejectsBrokenBackendResults(t *testing.T) {
	t.Parallel()
	internal := errorBody("internal server error", apierrors.TypeServer, "", "internal_server_error")
	notAnObject := &chat.Result{Choices: make([]chat.Output, 1)}
	notAnObject.SetReply([]byte(`[]`))
	tests := []struct {
		name string
		res  *chat.Result
	}{
		{"nil result", nil},
		{"too few choices", &chat.Result{}},
		{"too many choices", &chat.Result{Choices: make([]chat.Output, 2)}},
		{"raw reply that is not an object", notAnObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandlerWith(funcBackend{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) { return tc.res, nil }})
			w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`)
			require.Equal(t, 500, w.Code)
			require.JSONEq(t, internal, w.Body.String())
		})
	}
}

func TestHandlerEndsStreamsOfBrokenBackendsWithAnErrorEvent(t *testing.T) {
	t.Parallel()
	internal := errorBody("internal server error", apierrors.TypeServer, "", "internal_server_error")
	first := chat.Delta{Content: "Hi"}
	tests := []struct {
		name   string
		deltas []chat.Delta
		raws   map[int]string // the chunks of deltas, by index (Delta.SetChunk)
	}{
		{"choice out of range", []chat.Delta{first, {Choice: 1, Content: "x"}}, nil},
		{"negative choice", []chat.Delta{first, {Choice: -1, Content: "x"}}, nil},
		{"delta after finish", []chat.Delta{first, {FinishReason: chat.FinishStop}, {Content: "x"}}, nil},
		{"tool call without name", []chat.Delta{first, {ToolCalls: []chat.ToolCallDelta{{Index: 0, Arguments: "{}"}}}}, nil},
		{"tool call index skipped", []chat.Delta{first, {ToolCalls: []chat.ToolCallDelta{{Index: 1, Name: "f"}}}}, nil},
		{"raw chunk that is not an object", []chat.Delta{first, {}}, map[int]string{1: `"x"`}},
		{"raw chunk after finish", []chat.Delta{first, {FinishReason: chat.FinishStop}, {}}, map[int]string{2: `{"choices":[]}`}},
		{"raw chunk out of range", []chat.Delta{first, {Choice: 1}}, map[int]string{1: `{"choices":[]}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var items []chat.Delta
			for i, d := range tc.deltas {
				if raw, ok := tc.raws[i]; ok {
					d.SetChunk([]byte(raw))
				}
				items = append(items, d)
			}
			h := newHandlerWith(rawBackend{deltas: items})
			w := post(t, h, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
			require.Equal(t, 200, w.Code)
			evs := readEvents(t, w.Body.String())
			checkStream(t, evs, 1, false)
			require.JSONEq(t, internal, evs[len(evs)-1].Raw)
		})
	}
}

func TestHandlerAnswersAStreamThatFailsAtOnceWithAJSONError(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(funcStreamingBackend{StreamFunc: func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
		return func(yield func(chat.Delta, error) bool) {
			yield(chat.Delta{}, apierrors.RateLimitExceeded("upstream is busy", 0))
		}
	}})
	w := post(t, h, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 429, w.Code)
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	require.JSONEq(t, errorBody("upstream is busy", apierrors.TypeRateLimit, "", "rate_limit_exceeded"), w.Body.String())
}

func TestHandlerStreamsWithTheSpecHeaders(t *testing.T) {
	t.Parallel()
	w := post(t, newTestHandler(), `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 200, w.Code)
	require.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", w.Header().Get("Cache-Control"))
	require.Equal(t, "keep-alive", w.Header().Get("Connection"))
}

func TestHandlerFinishesChoicesTheBackendLeavesOpen(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(funcStreamingBackend{StreamFunc: deltas(
		chat.Delta{Choice: 1, Content: "b"},
		chat.Delta{Choice: 2, ToolCalls: []chat.ToolCallDelta{{Index: 0, ID: "tool-1", Name: "f"}}},
		chat.Delta{Choice: 2, ToolCalls: []chat.ToolCallDelta{{Index: 0, Arguments: "{}"}}},
		chat.Delta{Usage: &chat.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 99}},
	)})
	w := post(t, h, `{"model":"demo-chat","stream":true,"n":3,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`)
	evs := readEvents(t, w.Body.String())
	checkStream(t, evs, 3, true)
	var got []string
	for _, ev := range evs {
		b, _ := json.Marshal(normalize(ev.JSON)) // map keys sorted
		if ev.JSON == nil {
			b = []byte(ev.Raw)
		}
		got = append(got, string(b))
	}
	want := []string{
		`{"choices":[{"delta":{"content":"b","role":"assistant"},"finish_reason":null,"index":1}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"role":"assistant","tool_calls":[{"function":{"arguments":"","name":"f"},"id":"tool-1","index":0,"type":"function"}]},"finish_reason":null,"index":2}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{}"},"index":0}]},"finish_reason":null,"index":2}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{"role":"assistant"},"finish_reason":null,"index":0}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{},"finish_reason":"stop","index":0}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{},"finish_reason":"stop","index":1}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[{"delta":{},"finish_reason":"tool_calls","index":2}],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk"}`,
		`{"choices":[],"created":1700000000,"id":"chatcmpl-*","model":"demo-chat","object":"chat.completion.chunk","usage":{"completion_tokens":4,"prompt_tokens":3,"total_tokens":7}}`,
		`[DONE]`,
	}
	require.Equal(t, want, got)
}

func TestHandlerStreamsTheResultOfABackendThatDoesNotStream(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(funcBackend{CompleteFunc: func(_ context.Context, p *chat.Params) (*chat.Result, error) {
		return &chat.Result{Choices: []chat.Output{{Reasoning: "think", Content: "Hello"}, {ToolCalls: []chat.ToolCall{{Function: chat.FunctionCall{Name: "f", Arguments: `{"a":1}`}}}}},
			Usage: chat.Usage{PromptTokens: 1, CompletionTokens: 2}}, nil
	}})
	w := post(t, h, `{"model":"demo-chat","stream":true,"n":2,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`)
	evs := readEvents(t, w.Body.String())
	checkStream(t, evs, 2, true)
	require.Len(t, evs, 7) // reasoning, content, stop, tool call, tool_calls, usage, [DONE]
	require.Equal(t, "tool_calls", evs[4].JSON["choices"].([]any)[0].(map[string]any)["finish_reason"])
}

func TestHandlerPassesUnknownFieldsToTheBackend(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got *chat.Request
	)
	h := newHandlerWith(funcBackend{CompleteFunc: func(_ context.Context, p *chat.Params) (*chat.Result, error) {
		mu.Lock()
		got = p.Request
		mu.Unlock()
		return &chat.Result{Choices: make([]chat.Output, 1)}, nil
	}})
	body := `{"model":"demo-chat","seed":7,"user":"u-1","parallel_tool_calls":false,"reasoning_effort":"low",` +
		`"messages":[{"role":"user","name":"ann","content":[{"type":"text","text":"Hi","cache_control":{"type":"ephemeral"}}],"x_note":1}],` +
		`"tools":[{"type":"function","function":{"name":"f","strict":true},"x_tool":"t"}],"stream_options":{"include_usage":true,"x_opt":true}}`
	w := post(t, h, body)
	require.Equal(t, 200, w.Code, w.Body.String())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, json.RawMessage(`7`), got.Extra["seed"])
	require.Equal(t, json.RawMessage(`"low"`), got.Extra["reasoning_effort"])
	require.Equal(t, json.RawMessage(`1`), got.Messages[0].Extra["x_note"])
	require.Equal(t, json.RawMessage(`{"type":"ephemeral"}`), got.Messages[0].Content.Parts[0].Extra["cache_control"])
	out, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, body, string(out), "encoding the request gives back every field")
}

func TestHandlerChargesTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, newTestHandler(), auth.LimitedQuota(1000))

	w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 200, w.Code)
	var c chat.Completion
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &c))
	w = post(t, h, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 200, w.Code)

	require.Equal(t, int64(1000-2*c.Usage.TotalTokens), keys.Quota(t).Remaining, "both replies charged, the stream without include_usage too")
}

func TestErrorHookSeesWhatTheClientSees(t *testing.T) {
	t.Parallel()
	var (
		mu  sync.Mutex
		got []*apierrors.Error
	)
	h := newTestHandler(endpoint.WithErrorHook(func(_ *http.Request, err *apierrors.Error) {
		mu.Lock()
		got = append(got, err)
		mu.Unlock()
	}))
	post(t, h, `{"model":"demo-chat","messages":[]}`)
	post(t, h, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"[demo:fail]"}]}`)
	post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"fine"}]}`)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	require.Equal(t, "messages", got[0].Param)
	require.Equal(t, apierrors.CodeBadGateway, got[1].Code)
}

func TestNewHandlerPanicsOnNilDependencies(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "chat: NewHandler: nil Catalog", func() { chat.NewHandler(nil, funcBackend{}) })
	require.PanicsWithValue(t, "chat: NewHandler: nil Backend", func() { chat.NewHandler(testCatalog(), nil) })
	require.Panics(t, func() { endpoint.WithKeepAlive(-1) })
}

func TestBackendErrorsPassThroughUnchanged(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(funcBackend{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) {
		return nil, errors.New("secret upstream detail")
	}})
	w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 500, w.Code)
	require.NotContains(t, w.Body.String(), "secret")
}

// rawBackend replies with what an upstream encoded, as the relay does:
// res with its reply (Result.SetReply), or deltas with their chunks
// (Delta.SetChunk).
type rawBackend struct {
	res    *chat.Result
	deltas []chat.Delta
}

func (b rawBackend) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return b.res, nil
}

func (b rawBackend) Stream(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		for _, d := range b.deltas {
			if !yield(d, nil) {
				return
			}
		}
	}
}

func TestHandlerWritesARawResult(t *testing.T) {
	t.Parallel()
	res := &chat.Result{
		Choices: []chat.Output{{Content: "Hi"}},
		Usage:   chat.Usage{PromptTokens: 2, CompletionTokens: 1},
	}
	res.SetReply([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null},"logprobs":null,"finish_reason":"stop"}],"system_fingerprint":"fp"}`))
	h := newHandlerWith(rawBackend{res: res})
	w := post(t, h, `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 200, w.Code)
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
	require.JSONEq(t, `"chat.completion"`, string(got["object"]))
	require.JSONEq(t, `"demo-chat"`, string(got["model"]))
	require.JSONEq(t, `"fp"`, string(got["system_fingerprint"]))
	require.JSONEq(t, `[{"index":0,"message":{"role":"assistant","content":"Hi","refusal":null},"logprobs":null,"finish_reason":"stop"}]`, string(got["choices"]))
	require.JSONEq(t, `{"prompt_tokens":2,"completion_tokens":1,"total_tokens":3}`, string(got["usage"]), "the usage is the handler's")
	require.Len(t, got, 7, "id, object, created, model, choices, system_fingerprint, usage")
}
