package completions_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
	reads := [][]completions.Delta{{{Text: "a"}, {Text: "b"}}, {{Text: "c"}}}
	for _, tc := range []struct {
		name  string
		flush func(*completions.Params)
		want  [][]string // the texts the client had at each flush
	}{
		{"a stream that never calls Flush is flushed after every delta", nil,
			[][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "b", "c"}}},
		{"a stream that calls Flush is flushed then and at its end", (*completions.Params).Flush,
			[][]string{{"a", "b"}, {"a", "b", "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
			rec.Post(newHandlerWith(funcStreamingBackend{StreamFunc: endpointtest.Reads(tc.flush, reads...)}), "/v1/completions",
				`{"model":"demo-chat","prompt":"hi","stream":true}`)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var got [][]string
			for _, f := range rec.Flushed {
				got = append(got, texts(t, f))
			}
			require.Equal(t, tc.want, got)
			last := rec.Flushed[len(rec.Flushed)-1]
			require.Equal(t, rec.Body.String(), last, "nothing after the last flush")
			require.True(t, strings.HasSuffix(last, "data: [DONE]\n\n"))
		})
	}
}
