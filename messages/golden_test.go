package messages_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/messages"
)

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk) and compares the reply with
// <case>.response.json, or the stream with <case>.stream.txt, after
// normalizing the random ids; every stream must also follow the format's
// event sequence. Regenerate with go test ./messages -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	reqs, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, reqs)
	h := newTestHandler()
	for _, path := range reqs {
		name := strings.TrimSuffix(filepath.Base(path), ".request.json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(path)
			require.NoError(t, err)
			var req struct{ Stream bool }
			require.NoError(t, json.Unmarshal(body, &req))
			w := post(t, h, string(body))
			require.Equal(t, 200, w.Code, w.Body.String())
			got := normalizeIDs(w.Body.String())
			if !req.Stream {
				require.Equal(t, "application/json", w.Header().Get("Content-Type"))
				var buf bytes.Buffer
				require.NoError(t, json.Indent(&buf, []byte(got), "", "  "))
				buf.WriteByte('\n')
				compareGolden(t, filepath.Join("testdata", name+".response.json"), buf.String(), func(s string) any {
					var v any
					require.NoError(t, json.Unmarshal([]byte(s), &v))
					return v
				})
				return
			}
			require.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
			events, err := messages.ParseStream(got)
			require.NoError(t, err)
			require.NoError(t, messages.CheckEvents(events))
			compareGolden(t, filepath.Join("testdata", name+".stream.txt"), got, func(s string) any {
				evs, err := messages.ParseStream(s)
				require.NoError(t, err)
				return evs
			})
		})
	}
}
