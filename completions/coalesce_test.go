package completions_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// flushRecorder keeps the text of the stream at each flush.
type flushRecorder = endpointtest.FlushRecorder

// texts returns the choice texts of the chunks in a recorded stream.
func texts(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for ev, err := range sse.Read(strings.NewReader(stream)) {
		require.NoError(t, err)
		if ev.IsDone() {
			continue
		}
		var c struct{ Choices []struct{ Text string } }
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &c))
		for _, ch := range c.Choices {
			if ch.Text != "" {
				out = append(out, ch.Text)
			}
		}
	}
	return out
}

// TestHandlerCoalescesFlushes checks that the handler decides when to
// flush: a delta whose successor is not at hand goes out before the
// backend is waited for, deltas that are all at hand go out in one flush,
// and the stream ends flushed.
func TestHandlerCoalescesFlushes(t *testing.T) {
	t.Parallel()
	// a goes out alone; b, c and d are at hand when the handler goes on.
	rec, stream := endpointtest.Paced[completions.Params](t,
		completions.Delta{Text: "a"}, completions.Delta{Text: "b"}, completions.Delta{Text: "c"}, completions.Delta{Text: "d"})
	rec.Post(newHandlerWith(funcStreamingBackend{StreamFunc: stream}), "/v1/completions",
		`{"model":"demo-chat","prompt":"hi","stream":true}`)

	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.GreaterOrEqual(t, len(rec.Flushed), 2)
	require.Equal(t, []string{"a"}, texts(t, rec.Flushed[0]))
	require.Equal(t, []string{"a", "b", "c", "d"}, texts(t, rec.Flushed[1]), "b, c and d went out together")
	last := rec.Flushed[len(rec.Flushed)-1]
	require.Equal(t, rec.Body.String(), last, "nothing after the last flush")
	require.True(t, strings.HasSuffix(last, "data: [DONE]\n\n"))
}
