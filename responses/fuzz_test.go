package responses_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/responses"
)

// FuzzDecodeRequest checks that no body makes the request decoder or the
// handler panic (on POST /v1/responses and /v1/responses/compact), that
// every answer is a JSON reply, a JSON error or a well-formed stream, and
// that a request that decodes encodes to JSON that decodes to the same
// request.
func FuzzDecodeRequest(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"model":"demo-chat","input":7}`,
		`{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,"}]}]}`,
		`{"model":"demo-chat","tool_choice":{"type":"function"},"input":[{"type":"function_call_output","output":[]}]}`,
		`{"model":"demo-chat","max_output_tokens":1,"stream":true,"input":"\u0000\ud800"}`,
		`{"model":"demo-chat","previous_response_id":"resp_x","input":[{"type":"compaction","encrypted_content":"demo-compaction:bnVsbA=="}]}`,
		`{"model":"demo-chat","input":"hi","conversation":"conv_x"}`, `{"model":"demo-chat","input":"hi","conversation":{"id":7}}`,
	} {
		f.Add([]byte(s))
	}
	h := newTestHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		endpointtest.RoundTrip[responses.Request](t, body)
		checkEvents := func(s string) { checkStream(t, readEvents(t, s)) }
		// 502: the demo's [demo:fail] directive.
		if endpointtest.CheckAnswer(t, post(t, h, string(body)), checkEvents, 200, 400, 404, 502) {
			return
		}

		w := do(t, h, http.MethodPost, "/v1/responses/compact", string(body))
		switch w.Code {
		case 200, 400, 404:
		default:
			t.Fatalf("compact: status %d: %s", w.Code, w.Body)
		}
		require.True(t, json.Valid(w.Body.Bytes()), "%s", w.Body)
	})
}
