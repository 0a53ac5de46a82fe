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
	endpointtest.PaceTest[responses.Params, responses.Result, responses.Delta]{
		Handler: func(b endpointtest.FuncStreamingBackend[responses.Params, responses.Result, responses.Delta]) http.Handler {
			return newHandlerWith(b)
		},
		Request: endpointtest.Request("/v1/responses", `{"model":"demo-chat","stream":true,"input":"hi"}`),
		Flush:   (*responses.Params).Flush,
		Reads:   [][]responses.Delta{{{Text: "Hel"}, {Text: "lo"}}, {{Text: "!"}}},
		Count:   func(text string) int { return strings.Count(text, "event: "+responses.EventOutputTextDelta) },
		Unpaced: []int{1, 2, 3, 3},
		Paced:   []int{2, 3},
	}.Run(t)
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
