package chat_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
)

// blockingBackend sends one delta (when streaming), then blocks until its
// context ends, and reports that it has returned.
type blockingBackend struct {
	blocked  chan struct{} // closed when the backend blocks
	returned chan struct{} // closed when it returns
}

func newBlockingBackend() *blockingBackend {
	return &blockingBackend{blocked: make(chan struct{}), returned: make(chan struct{})}
}

func (b *blockingBackend) Complete(ctx context.Context, _ *chat.Params) (*chat.Result, error) {
	defer close(b.returned)
	close(b.blocked)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b *blockingBackend) Stream(ctx context.Context, _ *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		defer close(b.returned)
		if !yield(chat.Delta{Content: "first"}, nil) {
			return
		}
		close(b.blocked)
		<-ctx.Done()
		yield(chat.Delta{}, ctx.Err())
	}
}

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns, and the number
// of goroutines comes back to what it was. It does not run in parallel:
// it counts goroutines.
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			b := newBlockingBackend()
			hanguptest.Run(t, hanguptest.Case{
				Handler: newHandlerWith(b),
				Path:    "/v1/chat/completions",
				Body:    `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}],"stream":` + stream + `}`,
				Stream:  stream == "true",
				FirstLine: func(line string) bool {
					return strings.HasPrefix(line, "data: {")
				},
				Blocked:  b.blocked,
				Returned: b.returned,
			})
		})
	}
}
