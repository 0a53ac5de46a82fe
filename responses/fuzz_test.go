package responses_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
)

// FuzzDecodeRequest checks that no body makes the request decoder or the
// handler panic (on POST /v1/responses and /v1/responses/compact), that
// every answer is a JSON reply, a JSON error or a well-formed stream, and
// that a request that decodes encodes to JSON that decodes to the same
// request.
func FuzzDecodeRequest(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(f, err)
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"model":"demo-chat","input":7}`,
		`{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,"}]}]}`,
		`{"model":"demo-chat","tool_choice":{"type":"function"},"input":[{"type":"function_call_output","output":[]}]}`,
		`{"model":"demo-chat","max_output_tokens":1,"stream":true,"input":"\u0000\ud800"}`,
		`{"model":"demo-chat","previous_response_id":"resp_x","input":[{"type":"compaction","encrypted_content":"demo-compaction:bnVsbA=="}]}`,
	} {
		f.Add([]byte(s))
	}
	h := newTestHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		var req responses.Request
		if json.Unmarshal(body, &req) == nil {
			out, err := json.Marshal(req)
			require.NoError(t, err)
			var again responses.Request
			require.NoError(t, json.Unmarshal(out, &again), "%s", out)
			out2, err := json.Marshal(again)
			require.NoError(t, err)
			require.JSONEq(t, string(out), string(out2))
		}

		w := post(t, h, string(body))
		switch w.Code {
		case 200, 400, 404, 502: // 502: the demo's [demo:fail] directive
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			checkStream(t, readEvents(t, w.Body.String()))
			return
		}
		require.True(t, json.Valid(w.Body.Bytes()), "%s", w.Body)

		w = do(t, h, http.MethodPost, "/v1/responses/compact", string(body))
		switch w.Code {
		case 200, 400, 404:
		default:
			t.Fatalf("compact: status %d: %s", w.Code, w.Body)
		}
		require.True(t, json.Valid(w.Body.Bytes()), "%s", w.Body)
	})
}
