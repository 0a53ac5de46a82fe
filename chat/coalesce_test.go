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
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// flushRecorder keeps the text of the stream at each flush.
type flushRecorder = endpointtest.FlushRecorder

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

// TestHandlerFlushes checks when the handler flushes a stream: after
// every delta of a stream that says nothing of its pace, and, once the
// stream calls Params.Flush (before each read of its source), only then
// and at the end, so that what it yields between two calls leaves in one
// write and none of it waits for the next read.
func TestHandlerFlushes(t *testing.T) {
	t.Parallel()
	contentChunks := func(text string) int { return len(contents(t, eventData(t, text))) }
	request := endpointtest.Request("/v1/chat/completions", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	endpointtest.ChatPaceTest(func(b chat.StreamingBackend) http.Handler { return newHandlerWith(b) },
		request, contentChunks, []int{1, 2, 3, 3}, []int{2, 3}).Run(t)
}

// eventData is the data of the events of a recorded stream.
func eventData(t *testing.T, stream string) []string {
	t.Helper()
	var data []string
	for ev, err := range sse.Read(strings.NewReader(stream)) {
		require.NoError(t, err)
		data = append(data, ev.Data)
	}
	return data
}

// TestErrorFollowsUnflushedChunks checks that chunks not flushed yet
// reach the client before the error event that ends the stream.
func TestErrorFollowsUnflushedChunks(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	b := funcStreamingBackend{StreamFunc: func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
		return func(yield func(chat.Delta, error) bool) {
			if yield(chat.Delta{Content: "a"}, nil) {
				yield(chat.Delta{}, apierrors.BadGateway("upstream failed", errors.New("boom")))
			}
		}
	}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	r.Header.Set("Content-Type", "application/json")
	newHandlerWith(b).ServeHTTP(rec, r)

	require.Equal(t, rec.Body.String(), rec.Flushed[len(rec.Flushed)-1], "nothing after the last flush")
	all := rec.Received(t)
	require.Len(t, all, 2)
	require.Equal(t, []string{"a"}, contents(t, all[:1]))
	require.Contains(t, all[1], `"message":"upstream failed"`)
}

// TestResultRepliesInOneFlush checks that the reply of a backend that does
// not stream, all at hand, goes out in one flush with [DONE].
func TestResultRepliesInOneFlush(t *testing.T) {
	t.Parallel()
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	b := funcBackend{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) {
		return &chat.Result{Choices: []chat.Output{{Content: "hello", Reasoning: "hm"}}}, nil
	}}
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	r.Header.Set("Content-Type", "application/json")
	newHandlerWith(b).ServeHTTP(rec, r)

	require.Len(t, rec.Flushed, 1)
	require.Equal(t, []string{"hello"}, contents(t, rec.Received(t)))
	checkStream(t, readEvents(t, rec.Body.String()), 1, false)
}
