package responses_test

import (
	"context"
	"iter"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// flushRecorder keeps the text of the stream at each flush.
type flushRecorder = endpointtest.FlushRecorder

// paced streams its first delta, waits until it is flushed, then streams
// the others at once.
type paced struct {
	scripted
	flushed <-chan struct{}
	release chan<- struct{}
	t       *testing.T
}

func (p paced) Stream(context.Context, *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		defer close(p.release)
		for i, d := range p.scripted {
			if !yield(d, nil) {
				return
			}
			if i == 0 {
				select {
				case <-p.flushed:
				case <-time.After(10 * time.Second):
					p.t.Error("timed out waiting for the flush of the first delta")
				}
			}
		}
	}
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

// TestHandlerCoalescesFlushes checks that the handler decides when to
// flush: a delta whose successor is not at hand goes out before the
// backend is waited for, deltas that are all at hand go out in one flush,
// and the terminal event is flushed.
func TestHandlerCoalescesFlushes(t *testing.T) {
	t.Parallel()
	flushed, release := make(chan struct{}), make(chan struct{})
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder(), OnFlush: func(n int) {
		if n == 1 {
			close(flushed) // the first delta went out alone
			<-release      // and the others are at hand when the handler goes on
		}
	}}
	h := newHandlerWith(paced{scripted: scripted{
		{Item: 0, Text: "Hel"},
		{Item: 0, Text: "lo"},
		{Item: 0, Text: "!"},
		{Item: 1, Call: &responses.FunctionCall{Name: "f", Arguments: "{}"}},
	}, flushed: flushed, release: release, t: t})
	r := httptest.NewRequest(http.MethodPost, "/v1/responses",
		strings.NewReader(`{"model":"demo-chat","stream":true,"input":"hi"}`))
	r.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, r)

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
