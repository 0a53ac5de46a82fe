package completions_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
)

// bodyRecorder is a backend that records the body that the pass-through
// (internal/passthrough) gives it.
type bodyRecorder struct {
	completions.Backend
	got chan []byte
}

func (b bodyRecorder) CompleteRaw(ctx context.Context, p *completions.Params, body []byte) (*completions.Result, []byte, error) {
	b.got <- body
	res, err := b.Backend.Complete(ctx, p)
	return res, nil, err
}

func TestPassThroughBodyIsTheRequestAsSent(t *testing.T) {
	t.Parallel()
	const body = `{"model":"` + demo.ChatModel + `", "prompt":"hi","suffix":"!",  "echo":false}`
	b := bodyRecorder{Backend: demo.NewTextBackend().Completions(), got: make(chan []byte, 1)}
	w := post(t, newHandlerWith(b), body)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, body, string(<-b.got))
}

// rawBackend replies with a completion that it already has encoded, as a
// relay passes an upstream's reply through (internal/passthrough).
type rawBackend struct{}

func (b rawBackend) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	res, _, err := b.CompleteRaw(ctx, p, nil)
	return res, err
}

func (rawBackend) CompleteRaw(context.Context, *completions.Params, []byte) (*completions.Result, []byte, error) {
	return &completions.Result{
		Choices: []completions.Output{{Text: " fox", FinishReason: "length"}},
		Usage:   endpoint.Usage{PromptTokens: 1, CompletionTokens: 1},
	}, []byte(`{"choices":[{"text":" fox","index":0,"logprobs":{"tokens":[" fox"],"token_logprobs":[-0.1]},"finish_reason":"length"}]}`), nil
}

// TestPassThroughReply checks that a reply a backend already has encoded
// is written with the handler's own id, object, created and model, its
// members, and the usage.
func TestPassThroughReply(t *testing.T) {
	t.Parallel()
	catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}})
	h := completions.NewHandler(catalog, rawBackend{}, endpoint.WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
	w := post(t, h, `{"model":"m","prompt":"The quick brown","logprobs":1}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	var c map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &c))
	require.Equal(t, `"text_completion" "m"`, string(c["object"])+" "+string(c["model"]))
	require.Equal(t, `[{"text":" fox","index":0,"logprobs":{"tokens":[" fox"],"token_logprobs":[-0.1]},"finish_reason":"length"}]`, string(c["choices"]))
	require.Equal(t, `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`, string(c["usage"]))
}
