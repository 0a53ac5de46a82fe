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

// TestHandlerFlushes checks when the handler flushes a stream: after
// every delta of a stream that says nothing of its pace, and, once the
// stream calls Params.Flush, only then and at the end.
func TestHandlerFlushes(t *testing.T) {
	t.Parallel()
	endpointtest.PaceTest[completions.Params, completions.Result, completions.Delta]{
		Handler: func(b funcStreamingBackend) http.Handler { return newHandlerWith(b) },
		Request: endpointtest.Request("/v1/completions", `{"model":"demo-chat","prompt":"hi","stream":true}`),
		Flush:   (*completions.Params).Flush,
		Reads:   [][]completions.Delta{{{Text: "a"}, {Text: "b"}}, {{Text: "c"}}},
		Count:   func(text string) int { return len(texts(t, text)) },
		Unpaced: []int{1, 2, 3, 3},
		Paced:   []int{2, 3},
	}.Run(t)
}
