// Package suite holds what the conformance suites of the endpoint
// backends (chattest, completionstest, responsestest) share: a handler
// driven in memory, its log kept for failure messages, and the events of
// a streamed reply.
package suite

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
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
