package messages_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/messages"
)

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk) and compares the reply with
// <case>.response.json, or the stream with <case>.stream.txt, after
// normalizing the random ids; every stream must also follow the format's
// event sequence. Regenerate with go test ./messages -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	golden.Run(t, func(t *testing.T, name string, body []byte) {
		var req struct{ Stream bool }
		require.NoError(t, json.Unmarshal(body, &req))
		w := post(t, h, string(body))
		require.Equal(t, 200, w.Code, w.Body.String())
		got := normalizeIDs(w.Body.String())
		if !req.Stream {
			require.Equal(t, "application/json", w.Header().Get("Content-Type"))
			golden.JSON(t, golden.Path(name, ".response.json"), []byte(got))
			return
		}
		require.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
		events, err := messages.ParseStream(got)
		require.NoError(t, err)
		require.NoError(t, messages.CheckEvents(events))
		golden.Compare(t, golden.Path(name, ".stream.txt"), got, func(s string) any {
			evs, err := messages.ParseStream(s)
			require.NoError(t, err)
			return evs
		})
	})
}
