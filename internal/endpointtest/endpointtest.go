// Package endpointtest holds the test helpers that the endpoint packages
// (chat, completions, responses, messages) share: their handlers over
// the demo's models with a fixed clock, requests through a handler,
// error bodies, the events of a chat or completions stream, a recorder
// of flushes, backends made of functions or that block, and the checks
// of their fuzz targets.
package endpointtest

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// FixedClock is the clock of the test handlers: the replies' times
// ("created", "created_at", …) are always 1700000000.
func FixedClock() time.Time { return time.Unix(1700000000, 0) }

// Catalog is the catalogue of the test handlers: the demo's text models
// and extra.
func Catalog(extra ...models.Model) *models.MemoryCatalog {
	return models.NewMemoryCatalog(append(demo.TextModels(), extra...)...)
}

// NewHandler returns the handler of newHandler (an endpoint package's
// NewHandler, whose Option is O) over catalog and b, its clock
// [FixedClock] if the package takes endpoint.WithClock, with opts
// applied after.
func NewHandler[B, O any](newHandler func(models.Catalog, B, ...O) http.Handler, catalog models.Catalog, b B, opts ...O) http.Handler {
	if clock, ok := any(endpoint.WithClock(FixedClock)).(O); ok {
		opts = append([]O{clock}, opts...)
	}
	return newHandler(catalog, b, opts...)
}

// Post sends body to path on h as a POST with the JSON content type,
// after mods edited the request, and returns the recorded response.
func Post(t testing.TB, h http.Handler, path, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	serve(w, h, http.MethodPost, path, body, true, mods)
	return w
}

// Do sends a request to h, with the JSON content type when body is not
// empty, after mods edited it, and returns the recorded response.
func Do(t testing.TB, h http.Handler, method, path, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	serve(w, h, method, path, body, body != "", mods)
	return w
}

// serve serves a request to h into w, with the JSON content type when
// isJSON, after mods edited it.
func serve(w http.ResponseWriter, h http.Handler, method, path, body string, isJSON bool, mods []func(*http.Request)) {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if isJSON {
		r.Header.Set("Content-Type", "application/json")
	}
	for _, m := range mods {
		m(r)
	}
	h.ServeHTTP(w, r)
}

// Request returns a function that makes a POST of the JSON body to
// path, after mods edited it: a request of a [PaceTest].
func Request(path, body string, mods ...func(*http.Request)) func() *http.Request {
	return func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		for _, m := range mods {
			m(r)
		}
		return r
	}
}

// ContentType is a mod of [Post] that sets the request's Content-Type
// to ct, unless ct is empty.
func ContentType(ct string) func(*http.Request) {
	return func(r *http.Request) {
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
	}
}

// ErrorBody is the general error body with the given fields; an empty
// param is null.
func ErrorBody(message, typ, param, code string) string {
	var p any
	if param != "" {
		p = param
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": p, "code": code}})
	return string(b)
}

// RequireJSON checks that w is a JSON answer of status whose body is the
// JSON text want.
func RequireJSON(t testing.TB, w *httptest.ResponseRecorder, status int, want string) {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	require.JSONEq(t, want, w.Body.String())
}

// A StreamRequest is what the tests of chat and completions read of a
// request to check its stream: whether it streams, how many choices it
// asks for, and whether it asks for the usage.
type StreamRequest struct {
	Stream        bool
	N             *int
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// Choices is the number of choices asked for: n, 1 if none.
func (r *StreamRequest) Choices() int {
	if r.N == nil {
		return 1
	}
	return *r.N
}

// IncludeUsage reports whether the request asks for the usage chunk.
func (r *StreamRequest) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// An Event is one event of a recorded chat or completions stream: its
// data, decoded when it is JSON, and the raw text otherwise ([DONE]).
type Event struct {
	Raw  string
	JSON map[string]any
}

// ReadEvents parses a recorded chat or completions stream.
func ReadEvents(t testing.TB, body string) []Event {
	t.Helper()
	var evs []Event
	for ev, err := range sse.Read(strings.NewReader(body)) {
		require.NoError(t, err)
		e := Event{Raw: ev.Data}
		if !ev.IsDone() {
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &e.JSON), "event %q", ev.Data)
		}
		evs = append(evs, e)
	}
	return evs
}

// A FlushRecorder is a ResponseRecorder that keeps the text of the
// stream as it was at each flush: what the client had received by then.
type FlushRecorder struct {
	*httptest.ResponseRecorder
	Flushed []string
	OnFlush func(n int) // called after the n-th flush (1-based), if set
}

// Flush flushes the recorder and keeps the text so far.
func (f *FlushRecorder) Flush() {
	f.ResponseRecorder.Flush()
	f.Flushed = append(f.Flushed, f.Body.String())
	if f.OnFlush != nil {
		f.OnFlush(len(f.Flushed))
	}
}

// Post serves a POST of the JSON body to path on h into f.
func (f *FlushRecorder) Post(h http.Handler, path, body string) {
	serve(f, h, http.MethodPost, path, body, true, nil)
}

// Reads returns a StreamFunc that yields the deltas of reads in turn,
// as a relay yields the events of each read of its upstream's reply:
// when flush is not nil, it calls flush(p) (the Flush of the Params)
// before each read. With a nil flush, it yields them all without a word
// about its pace.
func Reads[P, D any](flush func(p *P), reads ...[]D) func(context.Context, *P) iter.Seq2[D, error] {
	return func(_ context.Context, p *P) iter.Seq2[D, error] {
		return func(yield func(D, error) bool) {
			for _, read := range reads {
				if flush != nil {
					flush(p)
				}
				for _, d := range read {
					if !yield(d, nil) {
						return
					}
				}
			}
		}
	}
}

// A PaceTest checks that a handler keeps the pace of its backend's
// stream: it serves Request to the handler over a backend whose stream
// yields Reads (see [Reads]), once without a word about its pace and
// once calling Flush (the Params' Flush) before each read, and checks
// the events that the client had at each flush, as Count counts them:
// Unpaced (a flush after every delta, and the end) and Paced (a flush at
// each call of Flush that follows a delta, and the end).
type PaceTest[P, R, D any] struct {
	Handler        func(b FuncStreamingBackend[P, R, D]) http.Handler
	Request        func() *http.Request
	Flush          func(p *P)
	Reads          [][]D
	Count          func(text string) int
	Unpaced, Paced []int
}

// ChatPaceTest returns the PaceTest of a handler over a chat backend,
// made by handler, whose backend yields the contents "a" and "b", then
// "c" (after a call of chat.Params.Flush when paced).
func ChatPaceTest(handler func(b chat.StreamingBackend) http.Handler, request func() *http.Request, count func(text string) int, unpaced, paced []int) PaceTest[chat.Params, chat.Result, chat.Delta] {
	return PaceTest[chat.Params, chat.Result, chat.Delta]{
		Handler: func(b FuncStreamingBackend[chat.Params, chat.Result, chat.Delta]) http.Handler { return handler(b) },
		Request: request,
		Flush:   (*chat.Params).Flush,
		Reads:   [][]chat.Delta{{{Content: "a"}, {Content: "b"}}, {{Content: "c"}}},
		Count:   count,
		Unpaced: unpaced,
		Paced:   paced,
	}
}

// Run runs the test.
func (pt PaceTest[P, R, D]) Run(t *testing.T) {
	t.Helper()
	for _, tc := range []struct {
		name  string
		flush func(*P)
		want  []int
	}{
		{"a stream that never calls Flush is flushed after every delta", nil, pt.Unpaced},
		{"a stream that calls Flush is flushed then and at its end", pt.Flush, pt.Paced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &FlushRecorder{ResponseRecorder: httptest.NewRecorder()}
			pt.Handler(FuncStreamingBackend[P, R, D]{StreamFunc: Reads(tc.flush, pt.Reads...)}).ServeHTTP(rec, pt.Request())
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var got []int
			for _, f := range rec.Flushed {
				got = append(got, pt.Count(f))
			}
			require.Equal(t, tc.want, got)
			require.Equal(t, rec.Body.String(), rec.Flushed[len(rec.Flushed)-1], "nothing after the last flush")
		})
	}
}

// Received is the data of the events that the client had received at
// the last flush.
func (f *FlushRecorder) Received(t testing.TB) []string {
	t.Helper()
	if len(f.Flushed) == 0 {
		return nil
	}
	var data []string
	for ev, err := range sse.Read(strings.NewReader(f.Flushed[len(f.Flushed)-1])) {
		require.NoError(t, err)
		data = append(data, ev.Data)
	}
	return data
}

// FuncBackend is a backend of an endpoint package (Params P, Result R)
// made of a function.
type FuncBackend[P, R any] struct {
	CompleteFunc func(context.Context, *P) (*R, error)
}

// Complete calls b.CompleteFunc.
func (b FuncBackend[P, R]) Complete(ctx context.Context, p *P) (*R, error) {
	return b.CompleteFunc(ctx, p)
}

// FuncStreamingBackend is a streaming backend of an endpoint package
// (Params P, Result R, Delta D) made of functions; CompleteFunc may be
// nil.
type FuncStreamingBackend[P, R, D any] struct {
	FuncBackend[P, R]
	StreamFunc func(context.Context, *P) iter.Seq2[D, error]
}

// Stream calls b.StreamFunc.
func (b FuncStreamingBackend[P, R, D]) Stream(ctx context.Context, p *P) iter.Seq2[D, error] {
	return b.StreamFunc(ctx, p)
}

// Deltas returns a StreamFunc that yields ds, whatever the request.
func Deltas[P, D any](ds ...D) func(context.Context, *P) iter.Seq2[D, error] {
	return func(context.Context, *P) iter.Seq2[D, error] {
		return func(yield func(D, error) bool) {
			for _, d := range ds {
				if !yield(d, nil) {
					return
				}
			}
		}
	}
}

// A BlockingBackend is a streaming backend of an endpoint package
// (Params P, Result R, Delta D) that sends its first delta (when
// streaming), then blocks until its context ends, and reports that it
// has returned.
type BlockingBackend[P, R, D any] struct {
	Blocked  chan struct{} // closed when the backend blocks
	Returned chan struct{} // closed when it returns
	first    D
}

// NewBlockingBackend returns a BlockingBackend whose first delta is
// first.
func NewBlockingBackend[P, R, D any](first D) *BlockingBackend[P, R, D] {
	return &BlockingBackend[P, R, D]{Blocked: make(chan struct{}), Returned: make(chan struct{}), first: first}
}

// Complete blocks until ctx ends and returns its error.
func (b *BlockingBackend[P, R, D]) Complete(ctx context.Context, _ *P) (*R, error) {
	defer close(b.Returned)
	close(b.Blocked)
	<-ctx.Done()
	return nil, ctx.Err()
}

// Stream yields the first delta, then blocks until ctx ends and yields
// its error.
func (b *BlockingBackend[P, R, D]) Stream(ctx context.Context, _ *P) iter.Seq2[D, error] {
	return func(yield func(D, error) bool) {
		defer close(b.Returned)
		if !yield(b.first, nil) {
			return
		}
		close(b.Blocked)
		<-ctx.Done()
		var zero D
		yield(zero, ctx.Err())
	}
}

// RoundTrip checks that a body that decodes into a Req encodes to JSON
// that decodes to the same request (which encodes to the same JSON).
func RoundTrip[Req any](t testing.TB, body []byte) {
	t.Helper()
	var req Req
	if json.Unmarshal(body, &req) != nil {
		return
	}
	out, err := json.Marshal(req)
	require.NoError(t, err)
	var again Req
	require.NoError(t, json.Unmarshal(out, &again), "%s", out)
	out2, err := json.Marshal(again)
	require.NoError(t, err)
	require.JSONEq(t, string(out), string(out2))
}

// CheckAnswer checks the answer w to a fuzzed request: its status is one
// of statuses, and its body is a stream, which checkStream checks, when
// its content type is text/event-stream, or JSON. It reports whether w
// is a stream.
func CheckAnswer(t testing.TB, w *httptest.ResponseRecorder, checkStream func(body string), statuses ...int) (stream bool) {
	t.Helper()
	if !slices.Contains(statuses, w.Code) {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		checkStream(w.Body.String())
		return true
	}
	require.True(t, json.Valid(w.Body.Bytes()), "%s", w.Body)
	return false
}
