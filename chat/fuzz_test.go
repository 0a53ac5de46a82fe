package chat_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// FuzzDecodeRequest checks that no body makes the request decoder or the
// handler panic, that every answer is a JSON reply, a JSON error or a
// well-formed stream, and that a request that decodes encodes to JSON
// that decodes to the same request.
func FuzzDecodeRequest(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"model":"demo-chat","messages":[{"role":"user","content":7}]}`,
		`{"model":"demo-chat","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,"}}]}]}`,
		`{"model":"demo-chat","stop":[1],"tool_choice":{"type":"function"},"messages":[{"role":"tool"}]}`,
		`{"model":"demo-chat","n":128,"max_tokens":1,"stream":true,"messages":[{"role":"user","content":"\u0000\ud800"}]}`,
	} {
		f.Add([]byte(s))
	}
	h := newTestHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		endpointtest.RoundTrip[chat.Request](t, body)
		endpointtest.CheckAnswer(t, post(t, h, string(body)), func(s string) { readEvents(t, s) }, 200, 400, 404)
	})
}

// FuzzDecodeRequestFast checks that the one-pass decoder of the hot path
// agrees with encoding/json whenever it reports that it handled a body:
// the same Request, Extra maps and nil-versus-empty slices included,
// encoded to the same bytes; and that the handler's decoder returns what
// encoding/json does for every body, errors included.
func FuzzDecodeRequestFast(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{
		benchJSON, benchStream, chat.DecodeBenchConversation,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","detail":"low","x":1}}],"x":{"y":[null]}}],"Stop":"a"}`,
		`{"stop":[null,"\u00e9"],"tool_choice":{"type":"function","function":{"name":"f"}},"stream_options":{"include_usage":true,"x":1}}`,
		`{"n":-0,"temperature":1e-3,"messages":[{"content":7},{"content":{}},{"content":null}],"tools":[{"type":"function","function":{"name":"f","parameters":null}}]}`,
		"{\"model\":\"\xff\\ud800\",\"messages\":[{\"tool_calls\":[]}]}",
		`{"model":"m","model":"n"}`, `{"x":1,"X":2,"x":3}`, `{"messages":[{"role":"user","y":{"a":1,"a":2}}]}`,
		`{"tools":[{"type":"function","function":{"name":"f","parameters":{"p":{"\u0061":1,"a":2}}}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		chat.CheckDecodeRequestFast(t, body)
	})
}
