package relay_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/sse"
)

func TestResponsesComplete(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-ok","input":"Hi","instructions":"Be brief.","reasoning":{"effort":"low"},"text":{"verbosity":"low"},"metadata":{"k":"v"}}`,
		"OpenAI-Organization", "org-3")
	require.Equal(t, 200, res.StatusCode)
	v := decode(t, res.Body)
	require.True(t, strings.HasPrefix(v["id"].(string), "resp_"))
	require.Equal(t, "pub-ok", v["model"])
	require.Equal(t, "completed", v["status"])
	out := v["output"].([]any)
	require.Len(t, out, 1, "the upstream's reasoning item is not relayed")
	msg := out[0].(map[string]any)
	require.Equal(t, "message", msg["type"])
	require.True(t, strings.HasPrefix(msg["id"].(string), "msg_"))
	require.NotEqual(t, "msg_up", msg["id"])
	require.Equal(t, relaytest.Text(8), msg["content"].([]any)[0].(map[string]any)["text"])
	require.Equal(t, int64(19), g.charged(t))

	got := upstreamSaw(t, g)
	require.Equal(t, `"ok"`, string(got["model"]))
	require.Equal(t, `"Hi"`, string(got["input"]))
	require.Equal(t, `false`, string(got["store"]), "the gateway keeps the conversation")
	require.JSONEq(t, `{"effort":"low"}`, string(got["reasoning"]))
	require.JSONEq(t, `{"verbosity":"low"}`, string(got["text"]))
	require.JSONEq(t, `"Be brief."`, string(got["instructions"]))
	require.NotContains(t, got, "stream")
	require.Equal(t, "org-3", g.up.Last().Header.Get("OpenAI-Organization"))
}

// TestResponsesConversation: the upstream is sent the whole conversation
// that previous_response_id names, without the gateway's ids.
func TestResponsesConversation(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-ok","input":"My colour is teal."}`)
	require.Equal(t, 200, res.StatusCode)
	first := decode(t, res.Body)["id"].(string)
	res = g.post(t, "/v1/responses", `{"model":"pub-ok","input":[{"role":"user","content":"What is it?"}],"previous_response_id":"`+first+`"}`)
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, 200, res.StatusCode, string(b))
	got := upstreamSaw(t, g)
	require.NotContains(t, got, "previous_response_id")
	var input []map[string]any
	require.NoError(t, json.Unmarshal(got["input"], &input))
	require.Len(t, input, 3)
	require.Equal(t, "user", input[0]["role"])
	// The store keeps an earlier input in its normal form: an array of
	// input_text parts.
	require.Equal(t, []any{map[string]any{"type": "input_text", "text": "My colour is teal."}}, input[0]["content"])
	require.NotContains(t, input[0], "id", "the gateway's item ids stay at the gateway")
	require.Equal(t, "assistant", input[1]["role"])
	require.NotContains(t, input[1], "id", "the gateway's item ids stay at the gateway")
	require.Contains(t, string(got["input"]), relaytest.Text(8))
	require.Equal(t, "What is it?", input[2]["content"])
}

func TestResponsesToolsAndIncomplete(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-tools","input":"Weather?","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]}`)
	require.Equal(t, 200, res.StatusCode)
	out := decode(t, res.Body)["output"].([]any)
	require.Len(t, out, 1)
	call := out[0].(map[string]any)
	require.Equal(t, "function_call", call["type"])
	require.Equal(t, "call_up1", call["call_id"])
	require.Equal(t, "get_weather", call["name"])
	require.Equal(t, `{"city":"Paris"}`, call["arguments"])

	res = g.post(t, "/v1/responses", `{"model":"pub-incomplete","input":"Hi"}`)
	require.Equal(t, 200, res.StatusCode)
	v := decode(t, res.Body)
	require.Equal(t, "incomplete", v["status"])
	require.Equal(t, map[string]any{"reason": "max_output_tokens"}, v["incomplete_details"])
}

// responsesEvents reads a responses stream: each event's type, and the
// concatenated text deltas.
func responsesEvents(t *testing.T, r io.Reader) (types []string, text string, last map[string]any) {
	t.Helper()
	done := false
	for ev, err := range sse.Read(r) {
		require.NoError(t, err)
		require.False(t, done, "an event after data: [DONE]")
		if done = ev.IsDone(); done {
			continue
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &v))
		require.Equal(t, ev.Type, v["type"])
		types = append(types, ev.Type)
		if ev.Type == "response.output_text.delta" {
			text += v["delta"].(string)
		}
		last = v
	}
	require.True(t, done, "the stream does not end with data: [DONE]")
	return types, text, last
}

func TestResponsesStream(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-ok","input":"Hi","stream":true}`)
	require.Equal(t, 200, res.StatusCode)
	types, text, last := responsesEvents(t, res.Body)
	require.Equal(t, relaytest.Text(8), text)
	require.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}, types[:4])
	require.Equal(t, "response.completed", types[len(types)-1])
	resp := last["response"].(map[string]any)
	require.True(t, strings.HasPrefix(resp["id"].(string), "resp_"))
	require.Equal(t, map[string]any{"input_tokens": 11.0, "output_tokens": 8.0, "total_tokens": 19.0,
		"input_tokens_details": map[string]any{"cached_tokens": 0.0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0.0}}, resp["usage"])
	require.Equal(t, `true`, string(upstreamSaw(t, g)["stream"]))
	require.Equal(t, int64(19), g.charged(t))
}

func TestResponsesStreamToolCall(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-tools","input":"Weather?","stream":true}`)
	require.Equal(t, 200, res.StatusCode)
	types, _, last := responsesEvents(t, res.Body)
	require.Contains(t, types, "response.function_call_arguments.delta")
	require.Equal(t, "response.completed", types[len(types)-1])
	out := last["response"].(map[string]any)["output"].([]any)
	require.Len(t, out, 1)
	require.Equal(t, `{"city":"Paris"}`, out[0].(map[string]any)["arguments"])
}

func TestResponsesErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	for _, tc := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"model":"pub-status-429","input":"x"}`, 429, "rate_limit_exceeded"},
		{`{"model":"pub-status-500","input":"x","stream":true}`, 502, "bad_gateway"},
		{`{"model":"pub-malformed-json","input":"x"}`, 502, "bad_gateway"},
	} {
		res := g.post(t, "/v1/responses", tc.body)
		require.Equal(t, tc.status, res.StatusCode, tc.body)
		b, _ := io.ReadAll(res.Body)
		require.Equal(t, tc.code, errorOf(t, string(b))["code"], tc.body)
	}
	// After the first event, a broken upstream stream ends the client's
	// with response.failed; what was streamed is charged.
	for _, mode := range []string{relaytest.ModeDie, relaytest.ModeNoDone, relaytest.ModeErrorEvent, relaytest.ModeMalformedSSE} {
		res := g.post(t, "/v1/responses", `{"model":"pub-`+mode+`","input":"x","stream":true}`)
		require.Equal(t, 200, res.StatusCode)
		types, _, last := responsesEvents(t, res.Body)
		require.Equal(t, "response.failed", types[len(types)-1], mode)
		require.Equal(t, "bad_gateway", last["response"].(map[string]any)["error"].(map[string]any)["code"], mode)
		require.NotContains(t, last["response"].(map[string]any)["error"].(map[string]any)["message"], relaytest.LeakHost)
	}
	require.Positive(t, g.charged(t))
}

// TestResponsesCompact: a compaction is relayed with the whole
// conversation, and the upstream's compaction item, sent back in a later
// input, reaches the upstream as it gave it.
func TestResponsesCompact(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-ok","input":"My colour is teal."}`)
	require.Equal(t, 200, res.StatusCode)
	first := decode(t, res.Body)["id"].(string)
	res = g.post(t, "/v1/responses/compact", `{"model":"pub-ok","previous_response_id":"`+first+`","input":"And?"}`)
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, 200, res.StatusCode, string(b))
	v := decode(t, strings.NewReader(string(b)))
	require.Equal(t, "response.compaction", v["object"])
	out := v["output"].([]any)
	item := out[len(out)-1].(map[string]any)
	require.Equal(t, "compaction", item["type"])
	require.Equal(t, "enc:3", item["encrypted_content"], "the upstream compacted the whole conversation")
	require.NotEqual(t, "cmp_up", item["id"])
	require.Equal(t, "/v1/responses/compact", g.up.Last().Path)
	require.NotContains(t, upstreamSaw(t, g), "previous_response_id")

	itemJSON, err := json.Marshal(item)
	require.NoError(t, err)
	res = g.post(t, "/v1/responses", `{"model":"pub-ok","input":[`+string(itemJSON)+`,{"role":"user","content":"Go on."}]}`)
	b, _ = io.ReadAll(res.Body)
	require.Equal(t, 200, res.StatusCode, string(b))
	var input []map[string]any
	require.NoError(t, json.Unmarshal(upstreamSaw(t, g)["input"], &input))
	require.Equal(t, map[string]any{"type": "compaction", "encrypted_content": "enc:3"}, input[0])
}
