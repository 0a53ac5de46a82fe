package completions_test

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// bodyRecorder is a backend that records the Body of the Params it is
// asked, and of a copy of them with another Request.
type bodyRecorder struct {
	completions.Backend
	got, other chan []byte
}

func (b bodyRecorder) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	b.got <- p.Body()
	q := *p
	q.Request = &completions.Request{Model: p.Request.Model, Prompt: p.Request.Prompt}
	b.other <- q.Body()
	return b.Backend.Complete(ctx, p)
}

func TestParamsBodyIsTheRequestAsSent(t *testing.T) {
	t.Parallel()
	const body = `{"model":"` + demo.ChatModel + `", "prompt":"hi","suffix":"!",  "echo":false}`
	b := bodyRecorder{Backend: demo.NewTextBackend().Completions(), got: make(chan []byte, 1), other: make(chan []byte, 1)}
	w := post(t, newHandlerWith(b), body)
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, body, string(<-b.got))
	require.Nil(t, <-b.other, "a copy of the Params with another Request has no Body")
}

// rawBackend replies with what an upstream encoded, as the relay does:
// its reply (Result.SetReply), or deltas with their chunks
// (Delta.SetChunk); edit changes the result's choices and each delta,
// as a wrapper would.
type rawBackend struct {
	edit func(text *string)
}

func (b rawBackend) Complete(context.Context, *completions.Params) (*completions.Result, error) {
	res := &completions.Result{
		Choices: []completions.Output{{Text: " fox", FinishReason: "length"}},
		Usage:   endpoint.Usage{PromptTokens: 1, CompletionTokens: 1},
	}
	res.SetReply([]byte(`{"choices":[{"text":" fox","index":0,"logprobs":{"tokens":[" fox"],"token_logprobs":[-0.1]},"finish_reason":"length"}]}`))
	b.edit(&res.Choices[0].Text)
	return res, nil
}

func (b rawBackend) Stream(context.Context, *completions.Params) iter.Seq2[completions.Delta, error] {
	return func(yield func(completions.Delta, error) bool) {
		d := completions.Delta{Text: " fox", FinishReason: "length"}
		d.SetChunk([]byte(`{"choices":[{"text":" fox","index":0,"logprobs":{"tokens":[" fox"],"token_logprobs":[-0.1]},"finish_reason":"length"}]}`))
		b.edit(&d.Text)
		yield(d, nil)
	}
}

// TestPassThrough checks that a reply or chunk that a backend already
// has encoded is written with the handler's own id, object, created and
// model, its members, and the usage, as long as the Result or Delta
// still says what it says; one that a wrapper changed is encoded by the
// handler.
func TestPassThrough(t *testing.T) {
	t.Parallel()
	const upstream = `[{"text":" fox","index":0,"logprobs":{"tokens":[" fox"],"token_logprobs":[-0.1]},"finish_reason":"length"}]`
	for _, tc := range []struct {
		name string
		edit func(text *string)
		want string // the choices
	}{
		{"as the upstream sent it", func(*string) {}, upstream},
		{"a wrapper that changes the text", func(s *string) { *s = strings.ToUpper(*s) },
			`[{"text":" FOX","index":0,"finish_reason":"length"}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}})
			h := completions.NewHandler(catalog, rawBackend{edit: tc.edit}, endpoint.WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
			w := post(t, h, `{"model":"m","prompt":"The quick brown","logprobs":1}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			var c map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &c))
			require.Equal(t, `"text_completion" "m"`, string(c["object"])+" "+string(c["model"]))
			require.JSONEq(t, tc.want, string(c["choices"]))
			require.Equal(t, `{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`, string(c["usage"]))

			w = post(t, h, `{"model":"m","prompt":"The quick brown","logprobs":1,"stream":true}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			ev, err := first(sse.Read(w.Body))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &c))
			require.Equal(t, `"text_completion"`, string(c["object"]))
			require.JSONEq(t, tc.want, string(c["choices"]))
		})
	}
}

// first returns the first event of seq.
func first(seq iter.Seq2[sse.Event, error]) (sse.Event, error) {
	for ev, err := range seq {
		return ev, err
	}
	return sse.Event{}, nil
}
