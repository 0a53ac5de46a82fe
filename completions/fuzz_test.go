package completions_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
)

// FuzzDecodeRequest checks that no body makes the request decoder or the
// handler panic, that every answer is a JSON reply, a JSON error or a
// well-formed stream, and that a request that decodes encodes to JSON
// that decodes to the same request.
func FuzzDecodeRequest(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(f, err)
	for _, path := range seeds {
		b, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{``, `null`, `{}`, `{"model":"demo-chat","prompt":[1]}`, `{"model":"demo-chat","prompt":["a",null],"n":64,"stream":true}`} {
		f.Add([]byte(s))
	}
	h := newTestHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		var req completions.Request
		if json.Unmarshal(body, &req) == nil {
			out, err := json.Marshal(req)
			require.NoError(t, err)
			var again completions.Request
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
