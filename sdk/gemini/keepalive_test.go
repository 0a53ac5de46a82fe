package gemini_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/gemini"
)

// pausing is a streaming backend that sends "a", waits until its
// handler has written a keep-alive, then sends "b" and ends.
type pausing struct{ wrote <-chan struct{} }

func (pausing) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return &chat.Result{Choices: []chat.Output{{Content: "ab"}}}, nil
}

func (b pausing) Stream(ctx context.Context, _ *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		if !yield(chat.Delta{Content: "a"}, nil) {
			return
		}
		select {
		case <-b.wrote:
		case <-ctx.Done():
			yield(chat.Delta{}, ctx.Err())
			return
		}
		yield(chat.Delta{Content: "b", FinishReason: chat.FinishStop}, nil)
	}
}

// watcher signals the first write that is a keep-alive (ka).
type watcher struct {
	http.ResponseWriter
	ka   []byte
	once sync.Once
	seen chan struct{}
}

func (w *watcher) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if bytes.Equal(p, w.ka) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *watcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestKeepAlive checks that a silence in a stream is bridged with what
// each form's readers skip: an empty block (a blank line pair) in SSE,
// which Google's Go client reads through (an SSE comment would be an
// invalid chunk to it), and a line break, JSON whitespace, in the array.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		sse  bool
		ka   string
	}{{"sse", true, "\n\n"}, {"array", false, "\n"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			seen := make(chan struct{})
			h := gemini.NewHandler(newCatalog(), pausing{wrote: seen}, endpoint.WithKeepAlive(time.Millisecond))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(&watcher{ResponseWriter: w, ka: []byte(tc.ka), seen: seen}, r)
			}))
			t.Cleanup(srv.Close)
			if tc.sse {
				c := newSDK(t, srv.URL, "sk-any")
				var text strings.Builder
				for res, err := range c.Models.GenerateContentStream(context.Background(), "demo-chat", genai.Text("hi"), nil) {
					require.NoError(t, err)
					text.WriteString(res.Text())
				}
				require.Equal(t, "ab", text.String())
				return
			}
			res, err := http.Post(srv.URL+"/v1beta/models/demo-chat:streamGenerateContent", "application/json", strings.NewReader(`{"contents":[{"parts":[{"text":"hi"}]}]}`))
			require.NoError(t, err)
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Contains(t, string(body), "\n")
			var events []gemini.Response
			require.NoError(t, json.Unmarshal(body, &events), string(body))
			require.Equal(t, "a", events[0].Candidates[0].Content.Parts[0].Text)
			require.Equal(t, "b", events[1].Candidates[0].Content.Parts[0].Text)
		})
	}
}
