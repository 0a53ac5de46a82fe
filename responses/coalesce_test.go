package responses_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
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

// eventTypes returns the names of the events in a recorded stream.
func eventTypes(t *testing.T, text string) []string {
	t.Helper()
	var names []string
	for ev, err := range sse.Read(strings.NewReader(text)) {
		require.NoError(t, err)
		names = append(names, ev.Type)
	}
	return names
}

// TestMoreCoalescesFlushes checks that the events of deltas marked More
// wait for the next flush, and that the terminal event is flushed.
func TestMoreCoalescesFlushes(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	h := newHandlerWith(scripted{
		{Item: 0, Text: "Hel"},
		{Item: 0, Text: "lo", More: true},
		{Item: 0, Text: "!", More: true},
		{Item: 1, Call: &responses.FunctionCall{Name: "f", Arguments: "{}"}},
	})
	r := httptest.NewRequest(http.MethodPost, "/v1/responses",
		strings.NewReader(`{"model":"demo-chat","stream":true,"input":"hi"}`))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, r)

	require.Len(t, rec.flushed, 3)
	require.Equal(t, []string{
		responses.EventCreated, responses.EventInProgress, responses.EventOutputItemAdded,
		responses.EventContentPartAdded, responses.EventOutputTextDelta,
	}, eventTypes(t, rec.flushed[0]), "the first delta goes out at once")
	second := eventTypes(t, rec.flushed[1])
	require.Equal(t, responses.EventFunctionArgumentsDelta, second[len(second)-1], "the More deltas go out with the next one")
	require.Equal(t, 3, strings.Count(rec.flushed[1], "event: "+responses.EventOutputTextDelta))
	all := eventTypes(t, rec.flushed[2])
	require.Equal(t, []string{responses.EventCompleted, ""}, all[len(all)-2:], "the terminal event, then [DONE]")
	require.Equal(t, rec.Body.String(), rec.flushed[2], "nothing after the last flush")
	checkStream(t, readEvents(t, rec.Body.String()))
}
