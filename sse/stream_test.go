package sse_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	gosse "github.com/tmaxmax/go-sse"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/sse"
)

var update = flag.Bool("update", false, "update .stream.txt golden files")

// chunk is a reduced chat.completion.chunk, enough to give the fixtures
// the shape of real streams.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content,omitempty"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func textChunk(role, content string, finish *string) chunk {
	return chunk{
		ID: "chatcmpl-1", Object: "chat.completion.chunk", Created: 1700000000, Model: "demo",
		Choices: []chunkChoice{{Index: 0, Delta: delta{Role: role, Content: content}, FinishReason: finish}},
	}
}

func ptr[T any](v T) *T { return &v }

// responsesEvent is a reduced typed event of the responses stream.
type responsesEvent struct {
	Type           string         `json:"type"`
	SequenceNumber int            `json:"sequence_number"`
	Response       map[string]any `json:"response,omitempty"`
	Delta          string         `json:"delta,omitempty"`
	OutputIndex    *int           `json:"output_index,omitempty"`
	ContentIndex   *int           `json:"content_index,omitempty"`
}

func newRequest() *http.Request {
	return httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
}

// start opens a stream on a recorder, without keep-alive comments so that
// the recorded bytes are deterministic.
func start(t *testing.T, opts ...sse.Option) (*sse.Stream, *httptest.ResponseRecorder) {
	t.Helper()
	rec := httptest.NewRecorder()
	s, err := sse.Start(rec, newRequest(), append([]sse.Option{sse.WithKeepAlive(0)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, rec
}

func TestGolden(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write func(*sse.Stream) error
	}{
		{
			name: "chat",
			write: func(s *sse.Stream) error {
				return errors.Join(
					s.Send(textChunk("assistant", "", nil)),
					s.Send(textChunk("", "Hello <world> & \"friends\"", nil)),
					s.Send(textChunk("", "", ptr("stop"))),
					s.Send(chunk{
						ID: "chatcmpl-1", Object: "chat.completion.chunk", Created: 1700000000, Model: "demo",
						Choices: []chunkChoice{},
						Usage:   &usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8},
					}),
					s.Done(),
				)
			},
		},
		{
			name: "responses",
			write: func(s *sse.Stream) error {
				return errors.Join(
					s.SendJSON("response.created", responsesEvent{
						Type: "response.created", SequenceNumber: 0,
						Response: map[string]any{"id": "resp_1", "object": "response", "status": "in_progress"},
					}),
					s.SendJSON("response.output_text.delta", responsesEvent{
						Type: "response.output_text.delta", SequenceNumber: 1,
						Delta: "Hi", OutputIndex: ptr(0), ContentIndex: ptr(0),
					}),
					s.SendJSON("response.completed", responsesEvent{
						Type: "response.completed", SequenceNumber: 2,
						Response: map[string]any{"id": "resp_1", "object": "response", "status": "completed"},
					}),
				)
			},
		},
		{
			name: "error",
			write: func(s *sse.Stream) error {
				return errors.Join(
					s.Send(textChunk("assistant", "Hel", nil)),
					s.Error(apierrors.BadGateway("upstream failed", errors.New("dial tcp: connection refused"))),
				)
			},
		},
		{
			name: "error_internal",
			write: func(s *sse.Stream) error {
				return errors.Join(
					s.Send(textChunk("assistant", "Hel", nil)),
					s.Error(errors.New("pq: password authentication failed for user admin")),
				)
			},
		},
		{
			name: "passthrough",
			write: func(s *sse.Stream) error {
				return errors.Join(
					s.SendRaw("", []byte(`{"id":"chatcmpl-up","choices":[]}`)),
					s.SendEvent(sse.Event{Type: "ping"}),
					s.SendRaw("", []byte("first line\nsecond line")),
					s.SendRaw("", []byte(sse.DoneData)),
				)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, rec := start(t)
			require.NoError(t, tc.write(s))

			got := rec.Body.String()
			path := filepath.Join("testdata", tc.name+".stream.txt")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("stream mismatch (-want +got):\n%s", diff)
			}
			require.NotContains(t, got, "password", "a non-API error's text must not reach the client")
		})
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	s, rec := start(t)
	rec.Header().Set("X-Request-Id", "req-1")
	rec.Header().Set("Content-Length", "42")

	require.False(t, s.Started())
	require.Empty(t, rec.Header().Get("Content-Type"), "no header before the first event")
	require.Empty(t, rec.Header().Get("Cache-Control"))
	require.False(t, rec.Flushed)

	require.NoError(t, s.Send(map[string]int{"n": 1}))
	require.True(t, s.Started())
	require.True(t, rec.Flushed)

	res := rec.Result()
	require.Equal(t, http.StatusOK, res.StatusCode)
	want := http.Header{
		"Content-Type":      {"text/event-stream"},
		"Cache-Control":     {"no-cache"},
		"Connection":        {"keep-alive"},
		"X-Accel-Buffering": {"no"},
		"X-Request-Id":      {"req-1"},
	}
	if diff := cmp.Diff(want, res.Header); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

// serve runs h on a test server, over HTTP/2 with TLS when h2 is set.
func serve(t *testing.T, h http.HandlerFunc, h2 bool) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, srv.Client()
}

func TestHeadersOverTheWire(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		h2             bool
		wantProto      int
		wantConnection string
	}{
		{name: "HTTP1", wantProto: 1, wantConnection: "keep-alive"},
		{name: "HTTP2", h2: true, wantProto: 2, wantConnection: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, client := serve(t, func(w http.ResponseWriter, r *http.Request) {
				s, err := sse.Start(w, r)
				if err != nil {
					apierrors.Write(w, r, err)
					return
				}
				defer s.Close()
				_ = s.Send(textChunk("assistant", "Hi", nil))
				_ = s.Done()
			}, tc.h2)
			res, err := client.Post(srv.URL, "application/json", strings.NewReader(`{}`))
			require.NoError(t, err)
			defer res.Body.Close()

			require.Equal(t, tc.wantProto, res.ProtoMajor)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
			require.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
			require.Equal(t, "no", res.Header.Get("X-Accel-Buffering"))
			require.Equal(t, tc.wantConnection, res.Header.Get("Connection"))

			events := readAll(t, res.Body)
			require.Len(t, events, 2)
			require.True(t, events[1].IsDone())
		})
	}
}

func readAll(t *testing.T, r io.Reader) []sse.Event {
	t.Helper()
	var events []sse.Event
	for ev, err := range sse.Read(r) {
		require.NoError(t, err)
		events = append(events, ev)
	}
	return events
}

func TestErrorBeforeFirstEventIsJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantBody   apierrors.Body
	}{
		{
			name:       "APIError",
			err:        apierrors.InvalidRequest("messages", "messages must not be empty"),
			wantStatus: http.StatusBadRequest,
			wantBody:   apierrors.BodyOf(apierrors.InvalidRequest("messages", "messages must not be empty")),
		},
		{
			name:       "OtherError",
			err:        errors.New("secret internals"),
			wantStatus: http.StatusInternalServerError,
			wantBody:   apierrors.BodyOf(apierrors.Internal(nil)),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, rec := start(t)
			require.NoError(t, s.Error(tc.err))
			require.False(t, s.Started())

			require.Equal(t, tc.wantStatus, rec.Code)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			require.Empty(t, rec.Header().Get("Cache-Control"))
			var got apierrors.Body
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
			if diff := cmp.Diff(tc.wantBody, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			require.ErrorIs(t, s.Send(1), sse.ErrClosed)
		})
	}
}

func TestErrorEventHasNoDone(t *testing.T) {
	t.Parallel()
	s, rec := start(t)
	require.NoError(t, s.Send(textChunk("assistant", "Hel", nil)))
	require.NoError(t, s.Error(apierrors.InsufficientQuota("quota exhausted")))

	events := readAll(t, rec.Body)
	require.Len(t, events, 2)
	var got apierrors.Body
	require.NoError(t, json.Unmarshal([]byte(events[1].Data), &got))
	want := apierrors.BodyOf(apierrors.InsufficientQuota("quota exhausted"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error event (-want +got):\n%s", diff)
	}
	for _, ev := range events {
		require.False(t, ev.IsDone())
	}
	require.Equal(t, http.StatusOK, rec.Code, "the status went out with the first event")
}

func TestWritesAfterEndReturnErrClosed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(*sse.Stream) error
	}{
		{name: "Done", end: (*sse.Stream).Done},
		{name: "Error", end: func(s *sse.Stream) error { return s.Error(apierrors.BadGateway("x", nil)) }},
		{name: "Close", end: func(s *sse.Stream) error { s.Close(); return nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, rec := start(t)
			require.NoError(t, s.Send(1))
			require.NoError(t, tc.end(s))
			n := rec.Body.Len()

			require.ErrorIs(t, s.Send(2), sse.ErrClosed)
			require.ErrorIs(t, s.SendJSON("x", 2), sse.ErrClosed)
			require.ErrorIs(t, s.SendRaw("", []byte("2")), sse.ErrClosed)
			require.ErrorIs(t, s.Done(), sse.ErrClosed)
			require.ErrorIs(t, s.Error(errors.New("late")), sse.ErrClosed)
			s.Close()
			require.Equal(t, n, rec.Body.Len(), "nothing written after the end")
		})
	}
}

func TestSendRejectsBadInputAndStaysUsable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		send    func(*sse.Stream) error
		wantErr error
	}{
		{name: "EventNameWithLF", send: func(s *sse.Stream) error { return s.SendJSON("a\nb", 1) }, wantErr: sse.ErrInvalidEventName},
		{name: "EventNameWithCR", send: func(s *sse.Stream) error { return s.SendRaw("a\rb", []byte("1")) }, wantErr: sse.ErrInvalidEventName},
		{name: "RawEventNameWithLF", send: func(s *sse.Stream) error { return s.SendEvent(sse.Event{Type: "a\n", Data: "1"}) }, wantErr: sse.ErrInvalidEventName},
		{name: "Unencodable", send: func(s *sse.Stream) error { return s.Send(make(chan int)) }},
		{name: "UnencodableFloat", send: func(s *sse.Stream) error { return s.Send(map[string]float64{"x": math.NaN()}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, rec := start(t)
			err := tc.send(s)
			require.Error(t, err)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			}
			require.False(t, s.Started())
			require.Zero(t, rec.Body.Len())

			require.NoError(t, s.Send(map[string]string{"ok": "yes"}))
			require.NoError(t, s.Done())
			require.Equal(t, "data: {\"ok\":\"yes\"}\n\ndata: [DONE]\n\n", rec.Body.String())
		})
	}
}

func TestStartRejectsWriterThatCannotFlush(t *testing.T) {
	t.Parallel()
	w := struct{ http.ResponseWriter }{httptest.NewRecorder()}
	_, err := sse.Start(w, newRequest())
	require.ErrorIs(t, err, gosse.ErrUpgradeUnsupported)
}

func TestStartUnwrapsResponseWriter(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	s, err := sse.Start(unwrapper{rec}, newRequest(), sse.WithKeepAlive(0))
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Send(1))
	require.Equal(t, "data: 1\n\n", rec.Body.String())
}

// unwrapper hides its writer's Flush, reachable through Unwrap as with
// middleware that wraps the ResponseWriter.
type unwrapper struct{ rw http.ResponseWriter }

func (u unwrapper) Header() http.Header         { return u.rw.Header() }
func (u unwrapper) Write(p []byte) (int, error) { return u.rw.Write(p) }
func (u unwrapper) WriteHeader(code int)        { u.rw.WriteHeader(code) }
func (u unwrapper) Unwrap() http.ResponseWriter { return u.rw }

func TestCanceledRequestWritesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		write func(*sse.Stream) error
	}{
		{name: "Send", write: func(s *sse.Stream) error { return s.Send(1) }},
		{name: "SendRaw", write: func(s *sse.Stream) error { return s.SendRaw("x", []byte("1")) }},
		{name: "Done", write: (*sse.Stream).Done},
		{name: "Error", write: func(s *sse.Stream) error { return s.Error(apierrors.BadGateway("x", nil)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			rec := httptest.NewRecorder()
			s, err := sse.Start(rec, newRequest().WithContext(ctx))
			require.NoError(t, err)
			defer s.Close()

			require.ErrorIs(t, tc.write(s), context.Canceled)
			require.Zero(t, rec.Body.Len())
			require.False(t, rec.Flushed)
			require.False(t, s.Started())
		})
	}
}

func TestErrorWithCanceledCauseAfterStartWritesNothing(t *testing.T) {
	t.Parallel()
	s, rec := start(t)
	require.NoError(t, s.Send(1))
	require.NoError(t, s.Error(context.Canceled))
	require.Equal(t, "data: 1\n\n", rec.Body.String())
}

func TestWriteErrorIsStickyAndReturned(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset by peer")
	w := &failingWriter{ResponseRecorder: httptest.NewRecorder(), err: boom}
	s, err := sse.Start(w, newRequest(), sse.WithKeepAlive(0))
	require.NoError(t, err)
	defer s.Close()

	require.ErrorIs(t, s.Send(1), boom)
	require.ErrorIs(t, s.Send(2), boom, "the first write error sticks")
	require.ErrorIs(t, s.Error(apierrors.BadGateway("x", nil)), boom)
	require.Equal(t, 1, w.writes, "no write after the failed one")
}

type failingWriter struct {
	*httptest.ResponseRecorder
	err    error
	writes int
}

func (f *failingWriter) Write([]byte) (int, error) {
	f.writes++
	return 0, f.err
}

func TestKeepAlive(t *testing.T) {
	t.Parallel()
	sawComment := make(chan struct{})
	srv, client := serve(t, func(w http.ResponseWriter, r *http.Request) {
		s, err := sse.Start(w, r, sse.WithKeepAlive(time.Millisecond))
		if err != nil {
			apierrors.Write(w, r, err)
			return
		}
		defer s.Close()
		select { // a backend that is slow to its first token
		case <-sawComment:
		case <-r.Context().Done():
			return
		}
		_ = s.Send(textChunk("assistant", "Hi", nil))
		_ = s.Done()
	}, false)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound, not an assertion
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	require.NoError(t, err)
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))

	br := bufio.NewReader(res.Body)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err, "stream ended before a keep-alive comment")
		if line == ": keep-alive\n" {
			break
		}
		require.Equal(t, "\n", line, "only comments and blank lines before the first event")
	}
	close(sawComment)

	events := readAll(t, br) // comments are skipped by Read
	require.Len(t, events, 2)
	require.Contains(t, events[0].Data, `"content":"Hi"`)
	require.True(t, events[1].IsDone())
}

// waitForGoroutines polls until the number of goroutines is back to at most
// baseline, within a generous bound.
func waitForGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= baseline {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, want at most %d:\n%s", n, baseline, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// In a bubble, the keep-alive timers fire as the bubble's clock moves,
// synctest.Wait returns once every tick they started has run, and
// synctest.Test fails if a goroutine of the streams outlives the test.
func TestCloseStopsKeepAlive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		type pair struct {
			s   *sse.Stream
			rec *httptest.ResponseRecorder
		}
		var streams []pair
		for range 20 {
			rec := httptest.NewRecorder()
			s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(time.Microsecond))
			require.NoError(t, err)
			streams = append(streams, pair{s, rec})
		}
		time.Sleep(time.Millisecond) // a thousand intervals
		synctest.Wait()
		for _, p := range streams {
			require.True(t, p.s.Started(), "the timer wrote comments")
		}
		lens := make([]int, len(streams))
		for i, p := range streams {
			p.s.Close()
			lens[i] = p.rec.Body.Len() // the race detector flags any write after Close
		}
		time.Sleep(10 * time.Millisecond) // ten thousand intervals: a tick that ran late would have written
		synctest.Wait()
		for i, p := range streams {
			require.Equal(t, lens[i], p.rec.Body.Len(), "nothing written after Close")
		}
	})
}

// Not parallel: it counts goroutines.
func TestClientDisconnect(t *testing.T) {
	baseline := runtime.NumGoroutine()
	type result struct{ first, second error }
	results := make(chan result, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := sse.Start(w, r, sse.WithKeepAlive(time.Millisecond))
		if err != nil {
			apierrors.Write(w, r, err)
			return
		}
		defer s.Close()
		for i := 0; ; i++ {
			if err := s.Send(textChunk("", "token", nil)); err != nil {
				results <- result{first: err, second: s.Send(textChunk("", "more", nil))}
				return
			}
		}
	}))
	client := srv.Client()

	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	require.NoError(t, err)
	res, err := client.Do(req)
	require.NoError(t, err)
	for ev, err := range sse.Read(res.Body) {
		require.NoError(t, err)
		require.Contains(t, ev.Data, "token")
		break
	}
	cancel()
	res.Body.Close()

	select {
	case r := <-results:
		require.Error(t, r.first, "a write after the client left fails")
		require.Error(t, r.second)
	case <-time.After(time.Minute): // a bound, not an assertion on time
		t.Fatal("the handler kept writing after the client left")
	}
	srv.Close()
	client.CloseIdleConnections()
	waitForGoroutines(t, baseline)
}
