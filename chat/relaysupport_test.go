package chat_test

import (
	"context"
	"iter"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
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

// failingStream streams one delta reporting usage without a total, then
// fails.
type failingStream struct{ chat.Backend }

func (failingStream) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		if yield(chat.Delta{Content: "partial", Usage: &chat.Usage{PromptTokens: 5, CompletionTokens: 3}}, nil) {
			yield(chat.Delta{}, apierrors.BadGateway("upstream broke", nil))
		}
	}
}

func TestFailedStreamIsChargedTheTotalOfItsLastUsage(t *testing.T) {
	t.Parallel()
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(t, err)
	require.NoError(t, keys.Add(t.Context(), secret, auth.Key{ID: "key_1", Quota: auth.LimitedQuota(1000)}))
	h := auth.Middleware(keys)(newHandlerWith(failingStream{demo.NewTextBackend().Chat()}))
	w := post(t, h, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
		func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) })
	require.Equal(t, 200, w.Code)
	require.Contains(t, w.Body.String(), `"code":"bad_gateway"`)
	k, err := keys.Lookup(t.Context(), secret)
	require.NoError(t, err)
	require.Equal(t, int64(1000-8), k.Quota.Remaining)
}
