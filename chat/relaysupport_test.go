package chat_test

import (
	"context"
	"iter"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/passthrough"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// bodyRecorder is a backend that records the body that the pass-through
// (internal/passthrough) gives it.
type bodyRecorder struct {
	chat.Backend
	got chan []byte
}

func (b bodyRecorder) CompleteRaw(ctx context.Context, p *chat.Params, body []byte) (*chat.Result, []byte, error) {
	b.got <- body
	res, err := b.Backend.Complete(ctx, p)
	return res, nil, err
}

func TestPassThroughBodyIsTheRequestAsSent(t *testing.T) {
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
	h, keys := servedtest.Keyed(t, newHandlerWith(failingStream{demo.NewTextBackend().Chat()}), auth.LimitedQuota(1000))
	w := post(t, h, `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	require.Equal(t, 200, w.Code)
	require.Contains(t, w.Body.String(), `"code":"bad_gateway"`)
	require.Equal(t, int64(1000-8), keys.Quota(t).Remaining)
}

// TestPassThroughChunks checks that chunks a backend already has encoded
// (a relay's, through internal/passthrough) are written with the
// handler's own id, object, created and model first, and the chunk's
// other members as they are.
func TestPassThroughChunks(t *testing.T) {
	t.Parallel()
	usage := &chat.Usage{PromptTokens: 1, CompletionTokens: 2}
	b := rawBackend{deltas: []passthrough.Delta[chat.Delta]{
		{Raw: []byte(`{"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}`)},
		// The fields describe Raw: this one ends the choice.
		{Delta: chat.Delta{FinishReason: chat.FinishStop, Usage: usage},
			Raw: []byte(`{"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`)},
	}}
	catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}})
	h := chat.NewHandler(catalog, b, endpoint.WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
	w := post(t, h, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	var got []string
	for ev, err := range sse.Read(w.Body) {
		require.NoError(t, err)
		got = append(got, idPattern.ReplaceAllString(ev.Data, `"id":"chatcmpl-*"`))
	}
	require.Equal(t, []string{
		`{"id":"chatcmpl-*","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-*","object":"chat.completion.chunk","created":1700000000,"model":"m","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-*","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`[DONE]`,
	}, got)
}

var idPattern = regexp.MustCompile(`"id":"chatcmpl-[^"]*"`)
