package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/sse"
)

// flushRecorder is a ResponseRecorder that keeps the text of the stream as
// it was at each flush: what the client had received by then.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (f *flushRecorder) Flush() {
	f.ResponseRecorder.Flush()
	f.flushed = append(f.flushed, f.Body.String())
}

// received is the data of the events that the client had received at the
// last flush.
func (f *flushRecorder) received(t *testing.T) []string {
	t.Helper()
	if len(f.flushed) == 0 {
		return nil
	}
	var data []string
	for ev, err := range sse.Read(strings.NewReader(f.flushed[len(f.flushed)-1])) {
		require.NoError(t, err)
		data = append(data, ev.Data)
	}
	return data
}

// contents returns the delta contents among events' data.
func contents(t *testing.T, data []string) []string {
	t.Helper()
	var out []string
	for _, d := range data {
		if d == sse.DoneData {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(d), &c))
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				out = append(out, ch.Delta.Content)
			}
		}
	}
	return out
}

// TestMoreCoalescesFlushes checks that the chunks of deltas marked More
// wait for the next flush, that a delta without More goes out before the
// handler asks for the next one (the first one included: time to first
// byte), and that the stream ends flushed.
func TestMoreCoalescesFlushes(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	var seen [][]string // what the client had at each yield
	b := funcStreamingBackend{stream: func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
		return func(yield func(chat.Delta, error) bool) {
			for _, d := range []chat.Delta{
				{Content: "a"},
				{Content: "b", More: true},
				{Content: "c", More: true},
				{Content: "d"},
				{Content: "e", More: true}, // the last: More is ignored
			} {
				seen = append(seen, contents(t, rec.received(t)))
				if !yield(d, nil) {
					return
				}
			}
		}
	}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	r.Header.Set("Content-Type", "application/json")
	newHandlerWith(b).ServeHTTP(rec, r)

	require.Equal(t, [][]string{
		nil,
		{"a"}, // the first delta went out before the second was asked for
		{"a"}, // b waits for c
		{"a"}, // and c for d
		{"a", "b", "c", "d"},
	}, seen)
	require.Len(t, rec.flushed, 3, "a, then b-d, then e with the finish chunk and [DONE]")
	all := rec.received(t)
	require.Equal(t, []string{"a", "b", "c", "d", "e"}, contents(t, all))
	require.Equal(t, sse.DoneData, all[len(all)-1])
	checkStream(t, readEvents(t, rec.Body.String()), 1, false)
}

// TestMoreThenErrorFlushesChunksFirst checks that chunks left unflushed by
// More reach the client before the error event that ends the stream.
func TestMoreThenErrorFlushesChunksFirst(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	b := funcStreamingBackend{stream: func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
		return func(yield func(chat.Delta, error) bool) {
			if yield(chat.Delta{Content: "a", More: true}, nil) {
				yield(chat.Delta{}, apierrors.BadGateway("upstream failed", errors.New("boom")))
			}
		}
	}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	r.Header.Set("Content-Type", "application/json")
	newHandlerWith(b).ServeHTTP(rec, r)

	require.Len(t, rec.flushed, 1, "the chunk and the error event leave together")
	all := rec.received(t)
	require.Len(t, all, 2)
	require.Equal(t, []string{"a"}, contents(t, all[:1]))
	require.Contains(t, all[1], `"message":"upstream failed"`)
}

// TestResultRepliesInOneFlush checks that the reply of a backend that does
// not stream, all at hand, goes out in one flush with [DONE].
func TestResultRepliesInOneFlush(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	b := funcBackend{complete: func(context.Context, *chat.Params) (*chat.Result, error) {
		return &chat.Result{Choices: []chat.Output{{Content: "hello", Reasoning: "hm"}}}, nil
	}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	r.Header.Set("Content-Type", "application/json")
	newHandlerWith(b).ServeHTTP(rec, r)

	require.Len(t, rec.flushed, 1)
	require.Equal(t, []string{"hello"}, contents(t, rec.received(t)))
	checkStream(t, readEvents(t, rec.Body.String()), 1, false)
}
