package chat_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
)

// bodyRecorder is a backend that records the Params.Body it is given.
type bodyRecorder struct {
	chat.Backend
	got chan []byte
}

func (b bodyRecorder) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	b.got <- p.Body
	return b.Backend.Complete(ctx, p)
}

func TestParamsBodyIsTheRequestAsSent(t *testing.T) {
	t.Parallel()
	const body = `{"model":"` + demo.ChatModel + `", "messages":[{"role":"user","content":"hi","x_note":1}],"seed":  7}`
	b := bodyRecorder{Backend: demo.NewTextBackend().Chat(), got: make(chan []byte, 1)}
	w := post(t, newHandlerWith(b), body)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, body, string(<-b.got))
}
