package chat_test

import (
	"context"
	"encoding/json"
	"iter"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// bodyRecorder is a backend that records the Body of the Params it is
// asked, and of a copy of them with another Request.
type bodyRecorder struct {
	chat.StreamingBackend
	got, other chan []byte
}

func (b bodyRecorder) record(p *chat.Params) {
	b.got <- p.Body()
	q := *p
	q.Request = &chat.Request{Model: p.Request.Model, Messages: p.Request.Messages}
	b.other <- q.Body()
}

func (b bodyRecorder) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	b.record(p)
	return b.StreamingBackend.Complete(ctx, p)
}

func (b bodyRecorder) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	b.record(p)
	return b.StreamingBackend.Stream(ctx, p)
}

func TestParamsBodyIsTheRequestAsSent(t *testing.T) {
	t.Parallel()
	for _, stream := range []string{"false", "true"} {
		t.Run("stream="+stream, func(t *testing.T) {
			t.Parallel()
			body := `{"model":"` + demo.ChatModel + `", "stream":` + stream + `, "messages":[{"role":"user","content":"hi","x_note":1}],"seed":  7}`
			b := bodyRecorder{StreamingBackend: demo.NewTextBackend().Chat(), got: make(chan []byte, 1), other: make(chan []byte, 1)}
			w := post(t, newHandlerWith(b), body)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, body, string(<-b.got))
			require.Nil(t, <-b.other, "a copy of the Params with another Request has no Body")
		})
	}
}

func TestParamsBuiltInCodeHaveNoBody(t *testing.T) {
	t.Parallel()
	p := &chat.Params{Request: &chat.Request{Model: "m"}}
	require.Nil(t, p.Body())
	p.Flush() // without SetFlush: nothing to do, and no panic
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

// upstreamDeltas are the deltas of an upstream's stream with their chunks
// (Delta.SetChunk), as the relay yields them.
func upstreamDeltas() []chat.Delta {
	// The fields describe the chunks: the second ends the choice.
	ds := []chat.Delta{{Content: "Hi"}, {FinishReason: chat.FinishStop, Usage: &chat.Usage{PromptTokens: 1, CompletionTokens: 2}}}
	ds[0].SetChunk([]byte(`{"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}`))
	ds[1].SetChunk([]byte(`{"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`))
	return ds
}

// TestPassThroughChunks checks that the chunks that deltas carry (a
// relay's) are written with the handler's own id, object, created and
// model first, and the chunk's other members as they are, as long as
// the delta still says what its chunk says; a delta that a wrapper
// changed is encoded by the handler.
func TestPassThroughChunks(t *testing.T) {
	t.Parallel()
	const head = `{"id":"chatcmpl-*","object":"chat.completion.chunk","created":1700000000,"model":"m",`
	const (
		upstreamHi   = head + `"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"logprobs":null,"finish_reason":null}]}`
		upstreamStop = head + `"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`
		usage        = head + `"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`
	)
	for _, tc := range []struct {
		name string
		edit func(d *chat.Delta) // what a wrapper does to each delta
		want []string
	}{
		{"deltas as the upstream sent them", func(*chat.Delta) {}, []string{upstreamHi, upstreamStop, usage, `[DONE]`}},
		{"a wrapper that sets the same content keeps the chunks", func(d *chat.Delta) { d.Content = strings.Clone(d.Content) },
			[]string{upstreamHi, upstreamStop, usage, `[DONE]`}},
		{"a wrapper that changes the content gets it encoded by the handler", func(d *chat.Delta) { d.Content = strings.ToUpper(d.Content) },
			[]string{head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"HI"},"finish_reason":null}]}`, upstreamStop, usage, `[DONE]`}},
		{"a wrapper that changes the finish reason gets it encoded by the handler", func(d *chat.Delta) {
			if d.FinishReason != "" {
				d.FinishReason = chat.FinishContentFilter
			}
		}, []string{upstreamHi, head + `"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`, usage, `[DONE]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b chat.StreamingBackend = rawBackend{deltas: upstreamDeltas()}
			b = editingWrapper{inner: b, edit: tc.edit}
			catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}})
			h := chat.NewHandler(catalog, b, endpoint.WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
			w := post(t, h, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
			var got []string
			for ev, err := range sse.Read(w.Body) {
				require.NoError(t, err)
				got = append(got, idPattern.ReplaceAllString(ev.Data, `"id":"chatcmpl-*"`))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// editingWrapper is a backend that wraps another as an embedder's
// guardrail would: it edits each delta, and the choices of each result,
// in place.
type editingWrapper struct {
	inner chat.StreamingBackend
	edit  func(d *chat.Delta)
	out   func(o *chat.Output)
}

func (w editingWrapper) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	res, err := w.inner.Complete(ctx, p)
	if err == nil {
		for i := range res.Choices {
			w.out(&res.Choices[i])
		}
	}
	return res, err
}

func (w editingWrapper) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		for d, err := range w.inner.Stream(ctx, p) {
			w.edit(&d)
			if !yield(d, err) {
				return
			}
		}
	}
}

// TestPassThroughReply checks that the reply a Result carries (a
// relay's) is written as long as the Result's choices still say what it
// says; a Result that a wrapper changed in place is encoded by the
// handler.
func TestPassThroughReply(t *testing.T) {
	t.Parallel()
	const reply = `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"system_fingerprint":"fp"}`
	for _, tc := range []struct {
		name        string
		edit        func(o *chat.Output)
		passThrough bool
	}{
		{"a result as the upstream sent it", func(*chat.Output) {}, true},
		{"a wrapper that changes the content", func(o *chat.Output) { o.Content = "HI" }, false},
		{"a wrapper that changes tool call arguments in place", func(o *chat.Output) { o.ToolCalls[0].Function.Arguments = `{"x":1}` }, false},
		{"a wrapper that drops the reasoning it did not have", func(o *chat.Output) { o.Reasoning = "" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := &chat.Result{
				Choices: []chat.Output{{Content: "Hi", FinishReason: chat.FinishToolCalls,
					ToolCalls: []chat.ToolCall{{ID: "call_1", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: "{}"}}}}},
				Usage: chat.Usage{PromptTokens: 2, CompletionTokens: 1},
			}
			res.SetReply([]byte(reply))
			b := editingWrapper{inner: rawBackend{res: res}, out: tc.edit}
			w := post(t, newHandlerWith(b), `{"model":"demo-chat","messages":[{"role":"user","content":"Hi"}]}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			var got map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
			_, fp := got["system_fingerprint"]
			require.Equal(t, tc.passThrough, fp, "the upstream's members are sent only with its choices")
			var c chat.Completion
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &c))
			require.Equal(t, res.Choices[0].Content, *c.Choices[0].Message.Content, "the client gets what the Result says")
			require.Equal(t, res.Choices[0].ToolCalls, c.Choices[0].Message.ToolCalls)
		})
	}
}

var idPattern = regexp.MustCompile(`"id":"chatcmpl-[^"]*"`)
