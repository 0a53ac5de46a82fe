package chat_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
)

// addGoldenRequests seeds f with the request bodies of the golden files.
func addGoldenRequests(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(f, err)
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
}

// FuzzDecodeRequest checks that no body makes the request decoder or the
// handler panic, that every answer is a JSON reply, a JSON error or a
// well-formed stream, and that a request that decodes encodes to JSON
// that decodes to the same request.
func FuzzDecodeRequest(f *testing.F) {
	addGoldenRequests(f)
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
		var req chat.Request
		if json.Unmarshal(body, &req) == nil {
			out, err := json.Marshal(req)
			require.NoError(t, err)
			var again chat.Request
			require.NoError(t, json.Unmarshal(out, &again), "%s", out)
			out2, err := json.Marshal(again)
			require.NoError(t, err)
			require.JSONEq(t, string(out), string(out2))
		}

		w := post(t, h, string(body))
		switch w.Code {
		case 200, 400, 404:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			readEvents(t, w.Body.String())
			return
		}
		require.True(t, json.Valid(w.Body.Bytes()), "%s", w.Body)
	})
}

// FuzzDecodeRequestFast checks that the one-pass decoder of the hot path
// agrees with encoding/json whenever it reports that it handled a body:
// the same Request, Extra maps and nil-versus-empty slices included,
// encoded to the same bytes; and that the handler's decoder returns what
// encoding/json does for every body, errors included.
func FuzzDecodeRequestFast(f *testing.F) {
	addGoldenRequests(f)
	for _, s := range []string{
		benchJSON, benchStream, chat.DecodeBenchConversation,
		`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","detail":"low","x":1}}],"x":{"y":[null]}}],"Stop":"a"}`,
		`{"stop":[null,"\u00e9"],"tool_choice":{"type":"function","function":{"name":"f"}},"stream_options":{"include_usage":true,"x":1}}`,
		`{"n":-0,"temperature":1e-3,"messages":[{"content":7},{"content":{}},{"content":null}],"tools":[{"type":"function","function":{"name":"f","parameters":null}}]}`,
		"{\"model\":\"\xff\\ud800\",\"messages\":[{\"tool_calls\":[]}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		chat.CheckDecodeRequestFast(t, body)
	})
}
