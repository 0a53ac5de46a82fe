package responses_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/responses"
)

const invalid = apierrors.TypeInvalidRequest

func TestHandlerRejectsBadRequests(t *testing.T) {
	t.Parallel()
	const code = "invalid_request_error"
	fn := `"tools":[{"type":"function","name":"get_weather"}]`
	tests := []struct {
		name        string
		body        string
		contentType string
		wantStatus  int
		wantBody    string
	}{
		{"empty body", ``, "", 400,
			errorBody("request body is empty; expected a JSON object", invalid, "", code)},
		{"not JSON", `{"model":`, "", 400,
			errorBody("request body is not valid JSON: unexpected end of input", invalid, "", code)},
		{"not an object", `[1]`, "", 400,
			errorBody("request body must be a JSON object, got array", invalid, "", code)},
		{"wrong content type", `{}`, "text/plain", 400,
			errorBody(`Content-Type must be application/json, got "text/plain"`, invalid, "", code)},
		{"missing model", `{"input":"Hi"}`, "", 400,
			errorBody("model is required", invalid, "model", code)},
		{"model not a string", `{"model":7,"input":"Hi"}`, "", 400,
			errorBody("model must be a string, got number", invalid, "model", code)},
		{"missing input", `{"model":"demo-chat"}`, "", 400,
			errorBody("input is required", invalid, "input", code)},
		{"null input", `{"model":"demo-chat","input":null}`, "", 400,
			errorBody("input is required", invalid, "input", code)},
		{"input a number", `{"model":"demo-chat","input":42}`, "", 400,
			errorBody("input must be a string or an array of items, got number", invalid, "input", code)},
		{"no items", `{"model":"demo-chat","input":[]}`, "", 400,
			errorBody("input must hold at least 1 items", invalid, "input", code)},
		{"item without type or role", `{"model":"demo-chat","input":[{"content":"Hi"}]}`, "", 400,
			errorBody("input[0].type is required", invalid, "input[0].type", code)},
		{"message without role", `{"model":"demo-chat","input":[{"type":"message","content":"Hi"}]}`, "", 400,
			errorBody("input[0].role is required", invalid, "input[0].role", code)},
		{"bad role", `{"model":"demo-chat","input":[{"role":"user","content":"Hi"},{"role":"robot","content":"Hi"}]}`, "", 400,
			errorBody(`input[1].role must be one of user, assistant, system, developer, got "robot"`, invalid, "input[1].role", code)},
		{"message without content", `{"model":"demo-chat","input":[{"role":"user"}]}`, "", 400,
			errorBody("input[0].content is required", invalid, "input[0].content", code)},
		{"content an object", `{"model":"demo-chat","input":[{"role":"user","content":{"text":"Hi"}}]}`, "", 400,
			errorBody("input[0].content must be a string or an array of content parts, got object", invalid, "input[0].content", code)},
		{"no content parts", `{"model":"demo-chat","input":[{"role":"user","content":[]}]}`, "", 400,
			errorBody("input[0].content must hold at least 1 items", invalid, "input[0].content", code)},
		{"part without type", `{"model":"demo-chat","input":[{"role":"user","content":[{"text":"Hi"}]}]}`, "", 400,
			errorBody("input[0].content[0].type is required", invalid, "input[0].content[0].type", code)},
		{"image without url", `{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_text","text":"Hi"},{"type":"input_image"}]}]}`, "", 400,
			errorBody("input[0].content[1].image_url is required (or file_id)", invalid, "input[0].content[1].image_url", code)},
		{"image with a bad url", `{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_image","image_url":"ftp://example.com/a.png"}]}]}`, "", 400,
			errorBody("input[0].content[0].image_url must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)", invalid, "input[0].content[0].image_url", code)},
		{"function call without call_id", `{"model":"demo-chat","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "", 400,
			errorBody("input[0].call_id is required", invalid, "input[0].call_id", code)},
		{"function call without name", `{"model":"demo-chat","input":[{"type":"function_call","call_id":"call_1","arguments":"{}"}]}`, "", 400,
			errorBody("input[0].name is required", invalid, "input[0].name", code)},
		{"function call output without call_id", `{"model":"demo-chat","input":[{"type":"function_call_output","output":"42"}]}`, "", 400,
			errorBody("input[0].call_id is required", invalid, "input[0].call_id", code)},
		{"function call output without output", `{"model":"demo-chat","input":[{"type":"function_call_output","call_id":"call_1"}]}`, "", 400,
			errorBody("input[0].output is required", invalid, "input[0].output", code)},
		{"compaction without content", `{"model":"demo-chat","input":[{"type":"compaction"}]}`, "", 400,
			errorBody("input[0].encrypted_content is required", invalid, "input[0].encrypted_content", code)},
		{"compaction of another backend", `{"model":"demo-chat","input":[{"type":"compaction","encrypted_content":"gAAAA"}]}`, "", 400,
			errorBody("demo: a compaction item holds content that this backend did not make", invalid, "input", code)},
		{"temperature too high", `{"model":"demo-chat","input":"Hi","temperature":2.5}`, "", 400,
			errorBody("temperature must be at most 2, got 2.5", invalid, "temperature", code)},
		{"top_p too high", `{"model":"demo-chat","input":"Hi","top_p":1.5}`, "", 400,
			errorBody("top_p must be at most 1, got 1.5", invalid, "top_p", code)},
		{"max_output_tokens zero", `{"model":"demo-chat","input":"Hi","max_output_tokens":0}`, "", 400,
			errorBody("max_output_tokens must be at least 1, got 0", invalid, "max_output_tokens", code)},
		{"max_output_tokens a string", `{"model":"demo-chat","input":"Hi","max_output_tokens":"10"}`, "", 400,
			errorBody("max_output_tokens must be an integer, got string", invalid, "max_output_tokens", code)},
		{"tool without type", `{"model":"demo-chat","input":"Hi","tools":[{"name":"f"}]}`, "", 400,
			errorBody("tools[0].type is required", invalid, "tools[0].type", code)},
		{"function tool without name", `{"model":"demo-chat","input":"Hi","tools":[{"type":"function"}]}`, "", 400,
			errorBody("tools[0].name is required", invalid, "tools[0].name", code)},
		{"bad tool_choice string", `{"model":"demo-chat","input":"Hi","tool_choice":"always",` + fn + `}`, "", 400,
			errorBody(`tool_choice must be one of none, auto, required, or an object, got "always"`, invalid, "tool_choice", code)},
		{"tool_choice a number", `{"model":"demo-chat","input":"Hi","tool_choice":1}`, "", 400,
			errorBody("tool_choice must be a string or an object, got number", invalid, "tool_choice", code)},
		{"tool_choice function without name", `{"model":"demo-chat","input":"Hi","tool_choice":{"type":"function"},` + fn + `}`, "", 400,
			errorBody("tool_choice.name is required", invalid, "tool_choice.name", code)},
		{"tool_choice required without tools", `{"model":"demo-chat","input":"Hi","tool_choice":"required"}`, "", 400,
			errorBody("tool_choice requires tools: it obliges the model to call one, and none are given", invalid, "tool_choice", code)},
		{"tool_choice names an unknown function", `{"model":"demo-chat","input":"Hi","tool_choice":{"type":"function","name":"nope"},` + fn + `}`, "", 400,
			errorBody(`tool_choice.name "nope" names no function in tools`, invalid, "tool_choice.name", code)},
		{"bad text.format type", `{"model":"demo-chat","input":"Hi","text":{"format":{"type":"yaml"}}}`, "", 400,
			errorBody(`text.format.type must be one of text, json_object, json_schema, got "yaml"`, invalid, "text.format.type", code)},
		{"json_schema without name", `{"model":"demo-chat","input":"Hi","text":{"format":{"type":"json_schema","schema":{}}}}`, "", 400,
			errorBody("text.format.name is required", invalid, "text.format.name", code)},
		{"too much metadata", `{"model":"demo-chat","input":"Hi","metadata":{"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1","g":"1","h":"1","i":"1","j":"1","k":"1","l":"1","m":"1","n":"1","o":"1","p":"1","q":"1"}}`, "", 400,
			errorBody("metadata must hold at most 16 items", invalid, "metadata", code)},
		{"metadata key too long", `{"model":"demo-chat","input":"Hi","metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`, "", 400,
			errorBody("metadata["+strings.Repeat("k", 65)+"] must hold at most 64 characters", invalid, "metadata["+strings.Repeat("k", 65)+"]", code)},
		{"metadata value too long", `{"model":"demo-chat","input":"Hi","metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, "", 400,
			errorBody("metadata[k] must hold at most 512 characters", invalid, "metadata[k]", code)},
		{"unknown model", `{"model":"gpt-unknown","input":"Hi"}`, "", 404,
			errorBody(`The model "gpt-unknown" does not exist or you do not have access to it.`, invalid, "model", "model_not_found")},
		{"model without compat-response", `{"model":"` + chatOnlyModel + `","input":"Hi"}`, "", 400,
			errorBody(`model "demo-chat-only" does not support endpoint type "compat-response" (supported_endpoint_types: compat)`, invalid, "model", code)},
		{"unknown previous_response_id", `{"model":"demo-chat","input":"Hi","previous_response_id":"resp_nope"}`, "", 400,
			errorBody(`Previous response with id "resp_nope" not found.`, invalid, "previous_response_id", code)},
		{"backend failure", `{"model":"demo-chat","input":"Hi [demo:fail]"}`, "", 502,
			errorBody("demo: simulated upstream failure ([demo:fail])", apierrors.TypeUpstream, "", "bad_gateway")},
		{"streamed backend failure before the first event", `{"model":"demo-chat","stream":true,"input":[{"type":"compaction","encrypted_content":"x"}]}`, "", 400,
			errorBody("demo: a compaction item holds content that this backend did not make", invalid, "input", code)},
	}
	h := newTestHandler()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := post(t, h, tc.body, endpointtest.ContentType(tc.contentType))
			endpointtest.RequireJSON(t, w, tc.wantStatus, tc.wantBody)
		})
	}
}

func TestHandlerRejectsOversizedBodies(t *testing.T) {
	t.Parallel()
	h := newTestHandler(endpoint.WithMaxRequestBytes(64))
	w := post(t, h, `{"model":"demo-chat","input":"`+strings.Repeat("a", 100)+`"}`)
	require.Equal(t, 400, w.Code)
	require.JSONEq(t, errorBody("request body is larger than the 64 bytes limit", invalid, "", "invalid_request_error"), w.Body.String())
}

func TestHandlerRoutes(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	tests := []struct {
		method, path string
		status       int
		allow        string
		body         string
	}{
		{http.MethodGet, "/v1/responses", 405, "POST",
			errorBody("Method GET is not allowed here; use POST.", invalid, "", "method_not_allowed")},
		{http.MethodGet, "/v1/responses/compact", 405, "POST",
			errorBody("Method GET is not allowed here; use POST.", invalid, "", "method_not_allowed")},
		{http.MethodPut, "/v1/responses/resp_1", 405, "GET, HEAD, DELETE",
			errorBody("Method PUT is not allowed here; use GET, HEAD, DELETE.", invalid, "", "method_not_allowed")},
		{http.MethodPut, "/v1/responses/compact", 405, "POST",
			errorBody("Method PUT is not allowed here; use POST.", invalid, "", "method_not_allowed")},
		{http.MethodDelete, "/v1/responses/compact", 405, "POST",
			errorBody("Method DELETE is not allowed here; use POST.", invalid, "", "method_not_allowed")},
		{http.MethodPost, "/v1/responses/resp_1/input_items", 405, "GET, HEAD",
			errorBody("Method POST is not allowed here; use GET, HEAD.", invalid, "", "method_not_allowed")},
		{http.MethodGet, "/api/v1/responses/resp_1", 404, "",
			errorBody("No responses route for GET /api/v1/responses/resp_1.", invalid, "", "not_found")},
		{http.MethodGet, "/v1/other", 404, "",
			errorBody("No responses route for GET /v1/other.", invalid, "", "not_found")},
		{http.MethodDelete, "/v1/responses/resp_nope", 404, "",
			errorBody(`Response with id "resp_nope" not found.`, invalid, "", "not_found")},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			t.Parallel()
			w := do(t, h, tc.method, tc.path, "")
			require.Equal(t, tc.status, w.Code)
			require.Equal(t, tc.allow, w.Header().Get("Allow"))
			require.JSONEq(t, tc.body, w.Body.String())
		})
	}
}

func TestRegisterServesEveryPattern(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	responses.Register(mux, newTestHandler())
	w := post(t, mux, `{"model":"demo-chat","input":"Hi"}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	id := decode(t, w.Body.String())["id"].(string)

	w = do(t, mux, http.MethodGet, "/v1/responses/"+id, "")
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, id, decode(t, w.Body.String())["id"])

	w = do(t, mux, http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat","previous_response_id":"`+id+`"}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, responses.ObjectCompaction, decode(t, w.Body.String())["object"])

	w = do(t, mux, http.MethodDelete, "/v1/responses/"+id, "")
	require.Equal(t, 200, w.Code, w.Body.String())
	require.JSONEq(t, `{"id":"`+id+`","object":"response","deleted":true}`, w.Body.String())

	w = do(t, mux, http.MethodGet, "/v1/responses/"+id, "")
	require.Equal(t, 404, w.Code)
}

// withPrincipal runs a request as the given key of the given account.
func withPrincipal(keyID, owner string) func(*http.Request) {
	return func(r *http.Request) {
		*r = *r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{KeyID: keyID, Owner: owner}))
	}
}

func TestStoredResponsesAreVisibleToTheirOwnerOnly(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	alice, aliceToo, bob := withPrincipal("key_a1", "alice"), withPrincipal("key_a2", "alice"), withPrincipal("key_b", "bob")

	w := post(t, h, `{"model":"demo-chat","input":"My secret is 42."}`, alice)
	require.Equal(t, 200, w.Code)
	stored := decode(t, w.Body.String())
	id := stored["id"].(string)

	w = do(t, h, http.MethodGet, "/v1/responses/"+id, "", aliceToo)
	require.Equal(t, 200, w.Code, "another key of the same account")
	require.Equal(t, stored, decode(t, w.Body.String()), "GET returns the response as it was sent")

	notFound := errorBody(`Response with id "`+id+`" not found.`, invalid, "", "not_found")
	for name, mod := range map[string]func(*http.Request){"another account": bob, "no principal": func(*http.Request) {}} {
		w = do(t, h, http.MethodGet, "/v1/responses/"+id, "", mod)
		require.Equal(t, 404, w.Code, name)
		require.JSONEq(t, notFound, w.Body.String(), name)
		w = do(t, h, http.MethodDelete, "/v1/responses/"+id, "", mod)
		require.Equal(t, 404, w.Code, name)
		w = post(t, h, `{"model":"demo-chat","input":"What was it?","previous_response_id":"`+id+`"}`, mod)
		require.Equal(t, 400, w.Code, name)
		require.JSONEq(t, errorBody(`Previous response with id "`+id+`" not found.`, invalid, "previous_response_id", "invalid_request_error"), w.Body.String(), name)
	}
	w = do(t, h, http.MethodGet, "/v1/responses/"+id, "", alice)
	require.Equal(t, 200, w.Code, "still there for its owner")
}

func TestStoreFalseKeepsNothing(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	for _, stream := range []string{"false", "true"} {
		w := post(t, h, `{"model":"demo-chat","input":"Forget me.","store":false,"stream":`+stream+`}`)
		require.Equal(t, 200, w.Code)
		var id string
		if stream == "true" {
			id = checkStream(t, readEvents(t, w.Body.String()))["id"].(string)
		} else {
			resp := decode(t, w.Body.String())
			require.Equal(t, false, resp["store"])
			id = resp["id"].(string)
		}
		w = do(t, h, http.MethodGet, "/v1/responses/"+id, "")
		require.Equal(t, 404, w.Code, "stream=%s", stream)
		w = post(t, h, `{"model":"demo-chat","input":"Hi","previous_response_id":"`+id+`"}`)
		require.Equal(t, 400, w.Code)
	}
}

func TestConversationThroughPreviousResponseID(t *testing.T) {
	t.Parallel()
	rec := &recordingBackend{Backend: newDemo()}
	h := newHandlerWith(rec)
	w := post(t, h, `{"model":"demo-chat","instructions":"Be kind.","input":"My name is Ada."}`)
	require.Equal(t, 200, w.Code)
	first := decode(t, w.Body.String())
	w = post(t, h, `{"model":"demo-chat","stream":true,"input":[{"role":"user","content":"Weather? get_weather"}],"previous_response_id":"`+first["id"].(string)+`","tools":[{"type":"function","name":"get_weather"}]}`)
	require.Equal(t, 200, w.Code)
	second := checkStream(t, readEvents(t, w.Body.String()))
	call := second["output"].([]any)[0].(map[string]any)
	require.Equal(t, "function_call", call["type"])
	w = post(t, h, `{"model":"demo-chat","input":[{"type":"function_call_output","call_id":"`+call["call_id"].(string)+`","output":"sunny"}],"previous_response_id":"`+second["id"].(string)+`"}`)
	require.Equal(t, 200, w.Code)
	third := decode(t, w.Body.String())
	require.Equal(t, second["id"], third["previous_response_id"])
	require.True(t, strings.HasPrefix(outputText(third), `Earlier you said: "Weather? get_weather" (2 earlier messages). The tool returned: "sunny".`), outputText(third))

	// The backend saw the whole conversation, oldest first, without the
	// earlier instructions.
	p := rec.last()
	var kinds []string
	for _, it := range p.History {
		kinds = append(kinds, it.Kind()+":"+it.Role)
	}
	require.Equal(t, []string{"message:user", "message:assistant", "message:user", "function_call:"}, kinds)
	require.Equal(t, "My name is Ada.", p.History[0].Content.String())
	require.Equal(t, outputText(first), p.History[1].Content.String())
	require.Equal(t, call["call_id"], p.History[3].CallID)
	require.Equal(t, call["arguments"], p.History[3].Arguments)
	require.Len(t, p.Items(), 5)
	require.Equal(t, responses.ItemFunctionCallOutput, p.Items()[4].Type)
}

func TestDeletedAncestorEndsTheConversation(t *testing.T) {
	t.Parallel()
	rec := &recordingBackend{Backend: newDemo()}
	h := newHandlerWith(rec)
	ids := []string{}
	prev := ""
	for _, msg := range []string{"one", "two", "three"} {
		body := `{"model":"demo-chat","input":"` + msg + `"`
		if prev != "" {
			body += `,"previous_response_id":"` + prev + `"`
		}
		w := post(t, h, body+`}`)
		require.Equal(t, 200, w.Code)
		prev = decode(t, w.Body.String())["id"].(string)
		ids = append(ids, prev)
	}
	require.Equal(t, 200, do(t, h, http.MethodDelete, "/v1/responses/"+ids[1], "").Code)
	w := post(t, h, `{"model":"demo-chat","input":"four","previous_response_id":"`+ids[2]+`"}`)
	require.Equal(t, 200, w.Code)
	require.Len(t, rec.last().History, 2, "only the third turn: the second was deleted")
	require.Equal(t, "three", rec.last().History[0].Content.String())
}

func TestCompactedConversationContinues(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	w := post(t, h, `{"model":"demo-chat","input":"Remember the word pineapple."}`)
	require.Equal(t, 200, w.Code)
	id := decode(t, w.Body.String())["id"].(string)
	w = do(t, h, http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat","previous_response_id":"`+id+`","input":"And the word kiwi."}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	var compacted responses.CompactedResponse
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &compacted))
	require.Len(t, compacted.Output, 3, "two user messages and the compaction")
	require.Equal(t, "Remember the word pineapple.", compacted.Output[0].Content[0].Text)
	require.Equal(t, "And the word kiwi.", compacted.Output[1].Content[0].Text)
	cmp := compacted.Output[2]
	require.Equal(t, responses.ItemCompaction, cmp.Type)
	require.True(t, strings.HasPrefix(cmp.ID, responses.CompactionIDPrefix), cmp.ID)
	require.Equal(t, compacted.Usage.InputTokens+compacted.Usage.OutputTokens, compacted.Usage.TotalTokens)

	item, err := json.Marshal(map[string]string{"type": "compaction", "encrypted_content": cmp.EncryptedContent})
	require.NoError(t, err)
	w = post(t, h, `{"model":"demo-chat","input":[`+string(item)+`,{"role":"user","content":"Which words?"}]}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.True(t, strings.HasPrefix(outputText(decode(t, w.Body.String())), `Earlier you said: "And the word kiwi." (2 earlier messages). You said: "Which words?".`))
}

func TestCompactWithoutCompactor(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(completeOnly{newDemo()})
	w := do(t, h, http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat","input":"Hi"}`)
	require.Equal(t, 400, w.Code)
	require.JSONEq(t, errorBody(`model "demo-chat" does not support compaction`, invalid, "model", "invalid_request_error"), w.Body.String())

	w = do(t, newTestHandler(), http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat"}`)
	require.Equal(t, 400, w.Code)
	require.JSONEq(t, errorBody("input or previous_response_id is required", invalid, "input", "invalid_request_error"), w.Body.String())

	w = do(t, newTestHandler(), http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat","previous_response_id":"resp_nope"}`)
	require.Equal(t, 400, w.Code)
	require.JSONEq(t, errorBody(`Previous response with id "resp_nope" not found.`, invalid, "previous_response_id", "invalid_request_error"), w.Body.String())

	w = do(t, newTestHandler(), http.MethodPost, "/v1/responses/compact", `{"model":"`+chatOnlyModel+`","input":"Hi"}`)
	require.Equal(t, 400, w.Code)
	require.Equal(t, "model", decode(t, w.Body.String())["error"].(map[string]any)["param"])
}

func TestNonStreamingBackendIsStreamed(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"model":"demo-chat","input":"Stream a result.","max_output_tokens":9}`,
		`{"model":"demo-chat","input":"Weather? get_weather","tools":[{"type":"function","name":"get_weather"}]}`,
	} {
		want := decode(t, post(t, newTestHandler(), body).Body.String())
		w := post(t, newHandlerWith(completeOnly{newDemo()}), strings.Replace(body, "{", `{"stream":true,`, 1))
		require.Equal(t, 200, w.Code)
		got := checkStream(t, readEvents(t, w.Body.String()))
		require.Equal(t, want["status"], got["status"])
		require.Equal(t, want["usage"], got["usage"])
		require.Equal(t, outputText(want), outputText(got))
		require.Len(t, got["output"], len(want["output"].([]any)))
	}
}

func TestStreamedTextEqualsTheResponse(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(newDemo(1))
	w := post(t, h, `{"model":"demo-chat","stream":true,"input":"One token at a time, please."}`)
	require.Equal(t, 200, w.Code)
	require.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
	evs := readEvents(t, w.Body.String())
	final := checkStream(t, evs)
	require.Equal(t, outputText(final), streamText(evs))
	want := decode(t, post(t, h, `{"model":"demo-chat","input":"One token at a time, please."}`).Body.String())
	require.Equal(t, outputText(want), streamText(evs), "the stream says what the JSON reply says")
	require.Equal(t, want["usage"], final["usage"])
}

func TestErrorHookSeesWhatClientsSee(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []*apierrors.Error
	h := newTestHandler(endpoint.WithErrorHook(func(_ *http.Request, err *apierrors.Error) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, err)
	}))
	post(t, h, `{"model":"demo-chat"}`)
	w := post(t, h, `{"model":"demo-chat","input":"Hi [demo:fail]","stream":true}`)
	require.Equal(t, responses.EventFailed, readEvents(t, w.Body.String())[5].Name)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	require.Equal(t, "input", got[0].Param)
	require.Equal(t, apierrors.CodeBadGateway, got[1].Code)
}

func TestBackendContractViolationsAreServerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		deltas []responses.Delta
	}{
		{"skipped item", []responses.Delta{{Item: 0, Text: "a"}, {Item: 2, Text: "b"}}},
		{"earlier item", []responses.Delta{{Item: 0, Text: "a"}, {Item: 1, Text: "b"}, {Item: 0, Text: "c"}}},
		{"call without name", []responses.Delta{{Item: 0, Call: &responses.FunctionCall{}}}},
		{"text for a call", []responses.Delta{{Item: 0, Call: &responses.FunctionCall{Name: "f"}}, {Item: 0, Text: "x"}}},
		{"arguments for a message", []responses.Delta{{Item: 0, Text: "x"}, {Item: 0, Arguments: "{}"}}},
		{"text for a reasoning item", []responses.Delta{{Item: 0, Reasoning: "x"}, {Item: 0, Text: "y"}}},
		{"reasoning for a message", []responses.Delta{{Item: 0, Text: "x"}, {Item: 0, Reasoning: "y"}}},
		{"reasoning and text at once", []responses.Delta{{Item: 0, Reasoning: "x", Text: "y"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := post(t, newHandlerWith(scripted(tc.deltas)), `{"model":"demo-chat","input":"Hi","stream":true}`)
			evs := readEvents(t, w.Body.String())
			final := checkStream(t, evs)
			require.Equal(t, "failed", final["status"])
			require.Equal(t, map[string]any{"code": "internal_server_error", "message": "internal server error"}, final["error"])
		})
	}
	t.Run("nil result", func(t *testing.T) {
		t.Parallel()
		w := post(t, newHandlerWith(nilResult{}), `{"model":"demo-chat","input":"Hi"}`)
		require.Equal(t, 500, w.Code)
		require.JSONEq(t, errorBody("internal server error", apierrors.TypeServer, "", "internal_server_error"), w.Body.String())
	})
}

func TestStreamWithSeveralItems(t *testing.T) {
	t.Parallel()
	u := responses.Usage{InputTokens: 2, OutputTokens: 3}
	w := post(t, newHandlerWith(scripted([]responses.Delta{
		{Item: 0, Reasoning: "Think"},
		{Item: 0, Reasoning: "ing."},
		{Item: 1, Text: "Let me check."},
		{Item: 2, Call: &responses.FunctionCall{CallID: "call_a", Name: "f", Arguments: `{"a":`}},
		{Item: 2, Arguments: `1}`},
		{Item: 3, Call: &responses.FunctionCall{Name: "g"}},
		{Usage: &u},
	})), `{"model":"demo-chat","input":"Hi","stream":true}`)
	final := checkStream(t, readEvents(t, w.Body.String()))
	out := final["output"].([]any)
	require.Len(t, out, 4)
	rs := out[0].(map[string]any)
	require.Equal(t, "reasoning", rs["type"])
	require.True(t, strings.HasPrefix(rs["id"].(string), responses.ReasoningIDPrefix))
	require.Equal(t, []any{map[string]any{"type": "summary_text", "text": "Thinking."}}, rs["summary"])
	require.Equal(t, "Let me check.", outputText(final))
	require.Equal(t, "call_a", out[2].(map[string]any)["call_id"])
	require.Equal(t, `{"a":1}`, out[2].(map[string]any)["arguments"])
	require.Equal(t, "", out[3].(map[string]any)["arguments"])
	require.True(t, strings.HasPrefix(out[3].(map[string]any)["call_id"].(string), responses.CallIDPrefix))
	require.Equal(t, float64(5), final["usage"].(map[string]any)["total_tokens"])
}

// recordingBackend records the Params of each request.
type recordingBackend struct {
	responses.Backend
	mu     sync.Mutex
	params []*responses.Params
}

func (b *recordingBackend) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	b.mu.Lock()
	b.params = append(b.params, p)
	b.mu.Unlock()
	return b.Backend.Complete(ctx, p)
}

func (b *recordingBackend) last() *responses.Params {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.params[len(b.params)-1]
}

// completeOnly hides every capability of a backend but Complete.
type completeOnly struct{ b responses.Backend }

func (c completeOnly) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	return c.b.Complete(ctx, p)
}

// scripted is a streaming backend that sends the same deltas every time.
type scripted []responses.Delta

func (s scripted) Complete(context.Context, *responses.Params) (*responses.Result, error) {
	return nil, errors.New("scripted: Complete not implemented")
}

func (s scripted) Stream(context.Context, *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		for _, d := range s {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// nilResult breaks the Backend contract.
type nilResult struct{}

func (nilResult) Complete(context.Context, *responses.Params) (*responses.Result, error) {
	return nil, nil
}

func TestFailedStreamIsStoredAsFailed(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	w := post(t, h, `{"model":"demo-chat","input":"Break [demo:fail]","stream":true}`)
	final := checkStream(t, readEvents(t, w.Body.String()))
	require.Equal(t, "failed", final["status"])
	require.Nil(t, final["usage"], "the demo reports no usage before failing")
	w = do(t, h, http.MethodGet, "/v1/responses/"+final["id"].(string), "")
	require.Equal(t, 200, w.Code)
	require.Equal(t, final, decode(t, w.Body.String()), "GET shows the response as the stream ended it")
}

// keepAliveWatcher is a ResponseWriter that closes seen at the first
// keep-alive comment written through it.
type keepAliveWatcher struct {
	*httptest.ResponseRecorder
	once sync.Once
	seen chan struct{}
}

func (w *keepAliveWatcher) Write(p []byte) (int, error) {
	if strings.Contains(string(p), ": keep-alive\n") {
		w.once.Do(func() { close(w.seen) })
	}
	return w.ResponseRecorder.Write(p)
}

// waitingBackend streams the demo's reply once the watcher has seen a
// keep-alive comment: a backend slow to its first token, without timing.
type waitingBackend struct {
	*demo.ResponsesBackend
	seen <-chan struct{}
}

func (b waitingBackend) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		select {
		case <-b.seen:
		case <-ctx.Done():
			yield(responses.Delta{}, ctx.Err())
			return
		}
		for d, err := range b.ResponsesBackend.Stream(ctx, p) {
			if !yield(d, err) {
				return
			}
		}
	}
}

func TestStreamKeepAlive(t *testing.T) {
	t.Parallel()
	w := &keepAliveWatcher{ResponseRecorder: httptest.NewRecorder(), seen: make(chan struct{})}
	h := newHandlerWith(waitingBackend{newDemo(), w.seen}, endpoint.WithKeepAlive(time.Millisecond))
	r := httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(`{"model":"demo-chat","input":"Take your time.","stream":true}`))
	h.ServeHTTP(w, r)
	body := w.Body.String()
	require.True(t, strings.HasPrefix(body, ": keep-alive\n\n"), body)
	final := checkStream(t, readEvents(t, body))
	require.Equal(t, "completed", final["status"], "comments do not disturb the events")
}

func TestUsageIsChargedToTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, newTestHandler(), auth.LimitedQuota(10000))
	remaining := func() int64 { return keys.Quota(t).Remaining }

	w := post(t, h, `{"model":"demo-chat","input":"Charge me."}`)
	require.Equal(t, 200, w.Code)
	total := decode(t, w.Body.String())["usage"].(map[string]any)["total_tokens"].(float64)
	require.Equal(t, int64(10000-total), remaining())

	w = post(t, h, `{"model":"demo-chat","input":"Charge me.","stream":true}`)
	require.Equal(t, 200, w.Code)
	streamed := checkStream(t, readEvents(t, w.Body.String()))["usage"].(map[string]any)["total_tokens"].(float64)
	require.Equal(t, int64(10000-total-streamed), remaining())

	w = do(t, h, http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat","input":"Compact me."}`)
	require.Equal(t, 200, w.Code)
	compacted := decode(t, w.Body.String())["usage"].(map[string]any)["total_tokens"].(float64)
	require.Positive(t, compacted)
	require.Equal(t, int64(10000-total-streamed-compacted), remaining())
}

func TestInputItems(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	w := post(t, h, `{"model":"demo-chat","input":[`+
		`{"role":"developer","content":"Be brief."},`+
		`{"role":"user","content":"One."},`+
		`{"role":"assistant","content":"Two."},`+
		`{"type":"message","id":"msg_mine","role":"user","content":[{"type":"input_text","text":"Three."}]},`+
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},`+
		`{"type":"function_call_output","call_id":"c1","output":"4"}]}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	id := decode(t, w.Body.String())["id"].(string)
	list := func(query string) map[string]any {
		t.Helper()
		w := do(t, h, http.MethodGet, "/v1/responses/"+id+"/input_items"+query, "")
		require.Equal(t, 200, w.Code, w.Body.String())
		return decode(t, w.Body.String())
	}

	all := list("?order=asc")
	require.Equal(t, "list", all["object"])
	require.Equal(t, false, all["has_more"])
	data := all["data"].([]any)
	require.Len(t, data, 6)
	var ids []string
	for _, x := range data {
		ids = append(ids, x.(map[string]any)["id"].(string))
	}
	require.Equal(t, "msg_mine", ids[3], "a given id is kept")
	for i, prefix := range []string{"msg_", "msg_", "msg_", "msg_", "fc_", "fco_"} {
		require.True(t, strings.HasPrefix(ids[i], prefix), "%d: %s", i, ids[i])
	}
	require.Equal(t, ids[0], all["first_id"])
	require.Equal(t, ids[5], all["last_id"])
	require.Equal(t, map[string]any{"id": ids[1], "type": "message", "status": "completed", "role": "user",
		"content": []any{map[string]any{"type": "input_text", "text": "One."}}}, data[1])
	require.Equal(t, []any{map[string]any{"type": "output_text", "text": "Two."}}, data[2].(map[string]any)["content"])

	page := list("?limit=2")
	require.Equal(t, true, page["has_more"])
	require.Equal(t, []any{data[5], data[4]}, page["data"], "newest first by default")
	page = list("?limit=2&after=" + page["last_id"].(string))
	require.Equal(t, []any{data[3], data[2]}, page["data"])
	page = list("?order=asc&after=" + ids[5])
	require.Equal(t, []any{}, page["data"])
	require.Equal(t, false, page["has_more"])

	for query, want := range map[string]string{
		"?limit=0":      errorBody(`limit must be an integer from 1 to 100, got "0"`, invalid, "limit", "invalid_request_error"),
		"?limit=101":    errorBody(`limit must be an integer from 1 to 100, got "101"`, invalid, "limit", "invalid_request_error"),
		"?order=random": errorBody(`order must be asc or desc, got "random"`, invalid, "order", "invalid_request_error"),
		"?after=nope":   errorBody(`after names no input item of response "`+id+`": "nope"`, invalid, "after", "invalid_request_error"),
	} {
		w := do(t, h, http.MethodGet, "/v1/responses/"+id+"/input_items"+query, "")
		require.Equal(t, 400, w.Code, query)
		require.JSONEq(t, want, w.Body.String(), query)
	}
	w = do(t, h, http.MethodGet, "/v1/responses/resp_nope/input_items", "")
	require.Equal(t, 404, w.Code)
	w = do(t, h, http.MethodGet, "/v1/responses/"+id+"/input_items", "", withPrincipal("key_x", "other"))
	require.Equal(t, 404, w.Code, "another owner's")
	w = do(t, h, http.MethodPost, "/v1/responses/"+id+"/input_items", "")
	require.Equal(t, 405, w.Code)
}

// An OwnerFunc that refuses a request makes every route that reads or
// writes the store answer 401 missing_authorization.
func TestRefusedOwnerIsUnauthorized(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	refuse := func(context.Context) (string, bool) { return "", false }
	responses.Register(mux, newTestHandler(responses.WithOwner(refuse)))
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"Hi"}`},
		{http.MethodPost, "/v1/responses/compact", `{"model":"demo-chat","input":"Hi"}`},
		{http.MethodGet, "/v1/responses/resp_1", ""},
		{http.MethodGet, "/v1/responses/resp_1/input_items", ""},
		{http.MethodDelete, "/v1/responses/resp_1", ""},
	} {
		w := do(t, mux, tc.method, tc.path, tc.body)
		require.Equal(t, http.StatusUnauthorized, w.Code, "%s %s: %s", tc.method, tc.path, w.Body.String())
		require.Equal(t, "missing_authorization", decode(t, w.Body.String())["error"].(map[string]any)["code"])
	}
}
