// Package suite holds what the conformance suites of the endpoint
// backends (chattest, completionstest, responsestest) share: a handler
// driven in memory, its log kept for failure messages, and the events of
// a streamed reply.
package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
)

// Log is a logger whose records are kept, so that a failing check can
// show what the handler logged: the text of a backend's error, which the
// client never sees.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Logger returns a logger that writes into l.
func (l *Log) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns what was logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// Reply is a handler's answer to one request.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// Post sends body to h as a POST to path, with an API key's
// Content-Type, and returns the whole reply.
func Post(h http.Handler, path, body string) *Reply {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return &Reply{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// Event is one event of a server-sent event stream.
type Event struct {
	Name string // the event: line; empty without one
	Data string // the data: lines, joined by "\n"
}

// Events parses an event stream: its events, comments skipped.
func Events(t testing.TB, body []byte) []Event {
	t.Helper()
	var (
		events []Event
		cur    Event
		data   []string
	)
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 64<<10), 32<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 || cur.Name != "" {
				cur.Data = strings.Join(data, "\n")
				events = append(events, cur)
			}
			cur, data = Event{}, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event:"):
			cur.Name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if len(data) > 0 {
		t.Errorf("the stream ends without the blank line after its last event: %q", strings.Join(data, "\n"))
	}
	return events
}

// Decode decodes a JSON text into a generic value, failing t when it is
// not one.
func Decode(t testing.TB, what string, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s is not a JSON object: %v: %.300s", what, err, data)
	}
	return v
}

// Fail reports an answer that breaks the contract, with the handler's log
// (where a backend's error text goes).
func Fail(t testing.TB, log *Log, format string, args ...any) {
	t.Helper()
	args = append(args, log.String())
	t.Fatalf(format+"\nhandler log:\n%s", args...)
}

// Backend is what the shared subtests of [RunShared] call of a backend
// under test, whose Params type is P and Delta type D.
type Backend[P, D any] struct {
	// Handler serves the backend, logging into log.
	Handler func(log *Log) http.Handler
	// Path is the route that Handler serves.
	Path string
	// Body returns a request of the suite's model with members.
	Body func(members string) string
	// Params decodes body into the Params that the handler would give
	// the backend.
	Params func(t *testing.T, body string) *P
	// Request returns what of p the backend must leave unmodified.
	Request func(p *P) any
	// Complete calls the backend's Complete.
	Complete func(ctx context.Context, p *P) error
	// Stream calls the backend's Stream; nil when it does not stream.
	Stream func(ctx context.Context, p *P) iter.Seq2[D, error]
}

// RunShared runs the subtests that the suites of every endpoint backend
// share: the backend leaves the request of members as it was, returns
// when its context is cancelled, stops streaming when its consumer does,
// and is safe for concurrent use.
func RunShared[P, D any](t *testing.T, b Backend[P, D], members string) {
	t.Run("LeavesTheRequestAsItWas", func(t *testing.T) {
		t.Parallel()
		body := b.Body(members)
		p, want := b.Params(t, body), b.Params(t, body)
		if err := b.Complete(t.Context(), p); err != nil {
			t.Logf("Complete: %v", err)
		}
		if !reflect.DeepEqual(b.Request(want), b.Request(p)) {
			t.Fatalf("Complete modified the request:\nbefore %+v\nafter  %+v", b.Request(want), b.Request(p))
		}
		if b.Stream == nil {
			return
		}
		for _, err := range b.Stream(t.Context(), p) {
			if err != nil {
				t.Logf("Stream: %v", err)
			}
		}
		if !reflect.DeepEqual(b.Request(want), b.Request(p)) {
			t.Fatalf("Stream modified the request:\nbefore %+v\nafter  %+v", b.Request(want), b.Request(p))
		}
	})
	t.Run("ReturnsWhenTheContextIsCancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		p := b.Params(t, b.Body(members))
		// The go test timeout bounds these calls: a backend that does not
		// watch its context hangs the suite here.
		_ = b.Complete(ctx, p)
		if b.Stream != nil {
			for range b.Stream(ctx, p) {
			}
		}
	})
	t.Run("StopsWhenTheConsumerStops", func(t *testing.T) {
		t.Parallel()
		if b.Stream == nil {
			t.Skip("the backend does not stream")
		}
		p := b.Params(t, b.Body(members))
		defer func() {
			// Range-over-func panics when an iterator calls yield again
			// after it returned false.
			if r := recover(); r != nil {
				t.Fatalf("Stream went on after its consumer stopped: %v", r)
			}
		}()
		n := 0
		for _, err := range b.Stream(t.Context(), p) {
			if err != nil {
				t.Logf("Stream: %v", err)
			}
			n++
			break
		}
		if n != 1 {
			t.Fatalf("Stream yielded nothing")
		}
	})
	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				body := b.Body(fmt.Sprintf(`"stream":%t,%s`, i%2 == 0, members))
				log := &Log{}
				rep := Post(b.Handler(log), b.Path, body)
				if rep.Status != http.StatusOK && !ClientError(rep.Status) {
					t.Errorf("concurrent request %d: status %d: %s\nhandler log:\n%s", i, rep.Status, rep.Body, log)
				}
			})
		}
		wg.Wait()
	})
}

// ClientError reports whether status is a 4xx.
func ClientError(status int) bool { return status >= 400 && status < 500 }

// Answered reports whether rep is a 200; a client error is logged (a
// backend may refuse what it cannot do), any other status fails t.
func Answered(t *testing.T, log *Log, rep *Reply) bool {
	t.Helper()
	switch {
	case rep.Status == http.StatusOK:
		return true
	case ClientError(rep.Status):
		t.Logf("the backend refused the request with %d: %s", rep.Status, rep.Body)
		return false
	}
	Fail(t, log, "status %d, want 200: %s", rep.Status, rep.Body)
	return false
}

// Check fails t with err, if any, and the handler's log.
func Check(t *testing.T, log *Log, err error) {
	t.Helper()
	if err != nil {
		Fail(t, log, "%v", err)
	}
}

// DataEvents returns the data of a stream's events but the final
// data: [DONE], which it checks, failing t on an error event.
func DataEvents(t *testing.T, log *Log, body []byte) [][]byte {
	t.Helper()
	events := Events(t, body)
	if len(events) == 0 || events[len(events)-1].Data != "[DONE]" {
		Fail(t, log, "the stream does not end with data: [DONE] (a failed stream ends with an error event):\n%s", body)
	}
	var data [][]byte
	for _, e := range events[:len(events)-1] {
		if v := Decode(t, "an event", []byte(e.Data)); v["error"] != nil {
			Fail(t, log, "the stream sent an error event: %s", e.Data)
		}
		data = append(data, []byte(e.Data))
	}
	return data
}

// Body returns a request body for model with members (a JSON object's
// members, without braces).
func Body(model, members string) string {
	m, _ := json.Marshal(model)
	return `{"model":` + string(m) + `,` + members + `}`
}

// DecodeRequest decodes body into a new *Req, as a handler would,
// failing t when it does not decode.
func DecodeRequest[Req any](t *testing.T, body string) *Req {
	t.Helper()
	req := new(Req)
	if err := json.Unmarshal([]byte(body), req); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return req
}

// Complete posts body to h at path and decodes the JSON reply into a
// *Reply; ok is false when the backend refused the request with a client
// error (logged).
func Complete[Reply any](t *testing.T, h func(*Log) http.Handler, path, body string) (_ *Reply, _ *Log, ok bool) {
	t.Helper()
	log := &Log{}
	rep := Post(h(log), path, body)
	if !Answered(t, log, rep) {
		return nil, log, false
	}
	res := new(Reply)
	if err := json.Unmarshal(rep.Body, res); err != nil {
		Fail(t, log, "the reply does not decode: %v: %s", err, rep.Body)
	}
	return res, log, true
}

// Stream posts body to h at path and decodes the data of each event of
// the streamed reply but the final [DONE] (see [DataEvents]) into a
// Chunk; ok is false when the backend refused the request with a client
// error (logged).
func Stream[Chunk any](t *testing.T, h func(*Log) http.Handler, path, body string) (_ []Chunk, _ *Log, ok bool) {
	t.Helper()
	log := &Log{}
	rep := Post(h(log), path, body)
	if !Answered(t, log, rep) {
		return nil, log, false
	}
	var chunks []Chunk
	for _, data := range DataEvents(t, log, rep.Body) {
		var c Chunk
		if err := json.Unmarshal(data, &c); err != nil {
			Fail(t, log, "a chunk does not decode: %v: %s", err, data)
		}
		chunks = append(chunks, c)
	}
	return chunks, log, true
}

// The methods of the endpoint backends, whose Params type is P, Result
// type R and Delta type D.
type (
	completer[P, R any] interface {
		Complete(ctx context.Context, p *P) (R, error)
	}
	streamer[P, D any] interface {
		Stream(ctx context.Context, p *P) iter.Seq2[D, error]
	}
)

// NewBackend returns the [Backend] of b, a backend of an endpoint package
// whose request type is Req: its handler (logging into the log given),
// the route it serves, and how its Params are made of a request and
// model, and which part of them b must not modify.
func NewBackend[Req, P, R, D any](b completer[P, R], model models.Model, handler func(*Log) http.Handler, path string,
	params func(*Req, *models.Model) *P, request func(*P) any) Backend[P, D] {
	var stream func(context.Context, *P) iter.Seq2[D, error]
	if s, ok := b.(streamer[P, D]); ok {
		stream = s.Stream
	}
	return Backend[P, D]{
		Handler: handler,
		Path:    path,
		Body:    func(members string) string { return Body(model.ID, members) },
		Params: func(t *testing.T, body string) *P {
			m := model
			return params(DecodeRequest[Req](t, body), &m)
		},
		Request: request,
		Complete: func(ctx context.Context, p *P) error {
			_, err := b.Complete(ctx, p)
			return err
		},
		Stream: stream,
	}
}

// CheckUsage checks the usage of a chat or completions reply.
func CheckUsage(u *endpoint.Usage) error {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		return fmt.Errorf("usage %+v: negative, or total_tokens is not prompt_tokens + completion_tokens", *u)
	}
	return nil
}

// CheckUsageChunk checks chunk k of a stream of last+1 chunks, one with
// choices choices that carries usage u: it must be the final chunk, with
// no choice.
func CheckUsageChunk(k, last, choices int, u *endpoint.Usage) error {
	if choices != 0 || k != last {
		return fmt.Errorf("chunk %d carries usage but is not the final chunk, with no choices", k)
	}
	return CheckUsage(u)
}
