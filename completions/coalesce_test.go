package completions_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/sse"
)

// flushRecorder is a ResponseRecorder that keeps the text of the stream
// as it was at each flush: what the client had received by then.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (f *flushRecorder) Flush() {
	f.ResponseRecorder.Flush()
	f.flushed = append(f.flushed, f.Body.String())
}

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

// TestMoreCoalescesFlushes checks that the chunks of deltas marked More
// wait for the next flush, that the others go out at once, and that the
// stream ends flushed.
func TestMoreCoalescesFlushes(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	h := newHandlerWith(funcStreamingBackend{stream: deltas(
		completions.Delta{Text: "a"},
		completions.Delta{Text: "b", More: true},
		completions.Delta{Text: "c"},
		completions.Delta{Text: "d", More: true},
	)})
	r := httptest.NewRequest(http.MethodPost, "/v1/completions",
		strings.NewReader(`{"model":"demo-chat","prompt":"hi","stream":true}`))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, r)

	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, rec.flushed, 3, "a; b and c; d with the finish chunk and [DONE]")
	require.Equal(t, []string{"a"}, texts(t, rec.flushed[0]))
	require.Equal(t, []string{"a", "b", "c"}, texts(t, rec.flushed[1]))
	require.Equal(t, rec.Body.String(), rec.flushed[2], "nothing after the last flush")
	require.Equal(t, []string{"a", "b", "c", "d"}, texts(t, rec.flushed[2]))
	require.True(t, strings.HasSuffix(rec.flushed[2], "data: [DONE]\n\n"))
}
