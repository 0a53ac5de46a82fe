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

// TestHandlerFlushes checks when the handler flushes a stream: after
// every delta of a stream that says nothing of its pace, and, once the
// stream calls Params.Flush, only then and at the end (the terminal
// event's flush).
func TestHandlerFlushes(t *testing.T) {
	t.Parallel()
	reads := [][]responses.Delta{
		{{Item: 0, Text: "Hel"}, {Item: 0, Text: "lo"}},
		{{Item: 1, Call: &responses.FunctionCall{Name: "f", Arguments: "{}"}}},
	}
	created := []string{responses.EventCreated, responses.EventInProgress, responses.EventOutputItemAdded, responses.EventContentPartAdded, responses.EventOutputTextDelta}
	for _, tc := range []struct {
		name  string
		flush func(*responses.Params)
		want  []int // the text deltas the client had at each flush but the last
	}{
		{"a stream that never calls Flush is flushed after every delta", nil, []int{1, 2, 2}},
		{"a stream that calls Flush is flushed then and at its end", (*responses.Params).Flush, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
			b := endpointtest.FuncStreamingBackend[responses.Params, responses.Result, responses.Delta]{StreamFunc: endpointtest.Reads(tc.flush, reads...)}
			rec.Post(newHandlerWith(b), "/v1/responses", `{"model":"demo-chat","stream":true,"input":"hi"}`)

			require.Len(t, rec.Flushed, len(tc.want)+1)
			require.Equal(t, created, eventTypes(t, rec.Flushed[0])[:len(created)], "the first flush carries the first delta")
			for i, n := range tc.want {
				require.Equal(t, n, strings.Count(rec.Flushed[i], "event: "+responses.EventOutputTextDelta), "flush %d", i)
			}
			last := rec.Flushed[len(rec.Flushed)-1]
			all := eventTypes(t, last)
			require.Contains(t, all, responses.EventFunctionArgumentsDelta)
			require.Equal(t, []string{responses.EventCompleted, ""}, all[len(all)-2:], "the terminal event, then [DONE]")
			require.Equal(t, rec.Body.String(), last, "nothing after the last flush")
			checkStream(t, readEvents(t, rec.Body.String()))
		})
	}
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
