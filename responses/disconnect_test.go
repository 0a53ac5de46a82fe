package responses_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
	"github.com/gatewaykit/gatewaykit/responses"
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

func (b *blockingBackend) Complete(ctx context.Context, _ *responses.Params) (*responses.Result, error) {
	defer close(b.returned)
	close(b.blocked)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b *blockingBackend) Stream(ctx context.Context, _ *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		defer close(b.returned)
		if !yield(responses.Delta{Text: "first"}, nil) {
			return
		}
		close(b.blocked)
		<-ctx.Done()
		yield(responses.Delta{}, ctx.Err())
	}
}

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns without storing
// the response, and the number of goroutines comes back to what it was.
// It does not run in parallel: it counts goroutines.
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			b := newBlockingBackend()
			store := responses.NewMemoryStore(nil)
			hanguptest.Run(t, hanguptest.Case{
				Handler: newHandlerWith(b, responses.WithStore(store)),
				Path:    "/v1/responses",
				Body:    `{"model":"demo-chat","input":"Hi","stream":` + stream + `}`,
				Stream:  stream == "true",
				FirstLine: func(line string) bool {
					return line == "event: response.created\n"
				},
				Blocked:  b.blocked,
				Returned: b.returned,
			})
			require.Zero(t, store.Len(), "a response whose client went away is not stored")
		})
	}
}
