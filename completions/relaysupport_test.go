package completions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
)

// bodyRecorder is a backend that records the Params.Body it is given.
type bodyRecorder struct {
	completions.Backend
	got chan []byte
}

func (b bodyRecorder) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	b.got <- p.Body
	return b.Backend.Complete(ctx, p)
}

func TestParamsBodyIsTheRequestAsSent(t *testing.T) {
	t.Parallel()
	const body = `{"model":"` + demo.ChatModel + `", "prompt":"hi","suffix":"!",  "echo":false}`
	b := bodyRecorder{Backend: demo.NewTextBackend().Completions(), got: make(chan []byte, 1)}
	w := post(t, newHandlerWith(b), body)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, body, string(<-b.got))
}
