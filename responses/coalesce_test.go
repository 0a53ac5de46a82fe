package responses_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// flushRecorder keeps the text of the stream at each flush.
type flushRecorder = endpointtest.FlushRecorder

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

// TestHandlerCoalescesFlushes checks that the handler decides when to
// flush: a delta whose successor is not at hand goes out before the
// backend is waited for, deltas that are all at hand go out in one flush,
// and the terminal event is flushed.
func TestHandlerCoalescesFlushes(t *testing.T) {
	t.Parallel()
	// The first delta goes out alone; the others are at hand when the
	// handler goes on.
	rec, stream := endpointtest.Paced[responses.Params](t,
		responses.Delta{Item: 0, Text: "Hel"},
		responses.Delta{Item: 0, Text: "lo"},
		responses.Delta{Item: 0, Text: "!"},
		responses.Delta{Item: 1, Call: &responses.FunctionCall{Name: "f", Arguments: "{}"}},
	)
	rec.Post(newHandlerWith(endpointtest.FuncStreamingBackend[responses.Params, responses.Result, responses.Delta]{StreamFunc: stream}),
		"/v1/responses", `{"model":"demo-chat","stream":true,"input":"hi"}`)

	require.GreaterOrEqual(t, len(rec.Flushed), 2)
	require.Equal(t, []string{
		responses.EventCreated, responses.EventInProgress, responses.EventOutputItemAdded,
		responses.EventContentPartAdded, responses.EventOutputTextDelta,
	}, eventTypes(t, rec.Flushed[0]), "the first delta goes out at once")
	second := eventTypes(t, rec.Flushed[1])
	require.Contains(t, second, responses.EventFunctionArgumentsDelta, "the deltas at hand go out together")
	require.Equal(t, 3, strings.Count(rec.Flushed[1], "event: "+responses.EventOutputTextDelta))
	last := rec.Flushed[len(rec.Flushed)-1]
	all := eventTypes(t, last)
	require.Equal(t, []string{responses.EventCompleted, ""}, all[len(all)-2:], "the terminal event, then [DONE]")
	require.Equal(t, rec.Body.String(), last, "nothing after the last flush")
	checkStream(t, readEvents(t, rec.Body.String()))
}

// TestStreamIsStoredBeforeDone: a client may ask for a streamed response
// as soon as it reads data: [DONE] (the SDKs stop there), so the response
// is stored before [DONE] is flushed, for completed and failed streams
// alike.
func TestStreamIsStoredBeforeDone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, input, status string }{
		{"completed", "hello", "completed"},
		{"failed", "Fail please [demo:fail]", "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := responses.NewMemoryStore(nil)
			h := newTestHandler(responses.WithStore(store))
			rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
			// The callback runs on the handler's goroutine: it records, and
			// the test checks once the handler has returned.
			var (
				sawDone bool
				atDone  *responses.StoredResponse
				getErr  error
			)
			rec.OnFlush = func(int) {
				body := rec.Body.String()
				if sawDone || !strings.HasSuffix(body, "data: [DONE]\n\n") {
					return
				}
				sawDone = true
				if id := regexp.MustCompile(`"id":"(resp_[A-Z0-9]+)"`).FindStringSubmatch(body); id != nil {
					atDone, getErr = store.Get(context.Background(), auth.AnonymousOwner, id[1])
				}
			}
			r := httptest.NewRequest(http.MethodPost, "/v1/responses",
				strings.NewReader(`{"model":"demo-chat","stream":true,"input":"`+tc.input+`"}`))
			r.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, r)
			require.True(t, sawDone, "the stream ends with [DONE]: %s", rec.Body.String())
			require.NoError(t, getErr, "the response is stored when [DONE] goes out")
			require.NotNil(t, atDone)
			require.Equal(t, tc.status, string(atDone.Response.Status))
		})
	}
}
