package completions_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
)

type blockingBackend struct {
	blocked, returned chan struct{}
}

func (b *blockingBackend) Complete(ctx context.Context, _ *completions.Params) (*completions.Result, error) {
	defer close(b.returned)
	close(b.blocked)
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b *blockingBackend) Stream(ctx context.Context, _ *completions.Params) iter.Seq2[completions.Delta, error] {
	return func(yield func(completions.Delta, error) bool) {
		defer close(b.returned)
		if !yield(completions.Delta{Text: "first"}, nil) {
			return
		}
		close(b.blocked)
		<-ctx.Done()
		yield(completions.Delta{}, ctx.Err())
	}
}

// TestClientDisconnect hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns, and the number
// of goroutines comes back to what it was (so it does not run in
// parallel).
func TestClientDisconnect(t *testing.T) {
	for _, stream := range []string{"true", "false"} {
		t.Run("stream="+stream, func(t *testing.T) {
			b := &blockingBackend{blocked: make(chan struct{}), returned: make(chan struct{})}
			hanguptest.Run(t, hanguptest.Case{
				Handler: newHandlerWith(b),
				Path:    "/v1/completions",
				Body:    `{"model":"demo-chat","prompt":"x","stream":` + stream + `}`,
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
