package responses

import (
	"context"
	"iter"
	"strings"

	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// PromptText returns the text of r's instructions and input (each input
// item's content or output), each on a line of its own: the text that
// interceptors see as the prompt (endpoint.Prompter).
func (r *Request) PromptText() string {
	var b strings.Builder
	line := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	if r.Instructions != nil {
		line(*r.Instructions)
	}
	if r.Input.Text != nil {
		line(*r.Input.Text)
	}
	for i := range r.Input.Items {
		it := &r.Input.Items[i]
		line(it.Content.String())
		if it.Output != nil {
			line(it.Output.String())
		}
	}
	return b.String()
}

// intercepted is a Backend whose replies go through the chain of
// interceptors of the handler's endpoint.WithInterceptors. It answers
// POST /v1/responses; compaction asks the handler's backend itself.
type intercepted struct {
	b     Backend
	chain pipeline.Chain
}

// intercept returns b with chain run around its replies; b itself if
// chain is nil.
func intercept(b Backend, chain pipeline.Chain) Backend {
	if chain == nil {
		return b
	}
	return &intercepted{b: b, chain: chain}
}

func (ib *intercepted) call(ctx context.Context, p *Params, stream bool) (*pipeline.Reply, error) {
	return ib.chain(ctx, &pipeline.Call{Family: "responses", Model: p.Request.Model, Stream: stream, Request: p.Request})
}

// own is the Result of an interceptor's own reply r: one message whose
// text is r's.
func own(r *pipeline.Reply) *Result {
	return &Result{Output: []Output{{Text: r.Text}},
		Usage: Usage{InputTokens: pipeline.Tokens(r.Usage.Input), OutputTokens: pipeline.Tokens(r.Usage.Output)}}
}

// Complete answers p with the chain's reply: its error, its own reply,
// or the backend's, the text of its messages through the edit hooks and
// its usage through the done hooks.
func (ib *intercepted) Complete(ctx context.Context, p *Params) (*Result, error) {
	r, err := ib.call(ctx, p, false)
	if err != nil {
		return nil, err
	}
	var res *Result
	if r.Own {
		res = own(r)
	} else if res, err = ib.b.Complete(ctx, p); err != nil || res == nil {
		r.Done(ctx, &pipeline.Usage{}, err)
		return res, err
	}
	for i := range res.Output {
		if o := &res.Output[i]; o.Call == nil && o.Reasoning == "" {
			o.Text = r.Edit(0, o.Text)
		}
	}
	u := pipeline.Usage{Input: int64(pipeline.Count(res.Usage.InputTokens)), Output: int64(pipeline.Count(res.Usage.OutputTokens))}
	if r.Done(ctx, &u, nil) {
		res.Usage.InputTokens, res.Usage.OutputTokens = pipeline.Tokens(u.Input), pipeline.Tokens(u.Output)
	}
	return res, nil
}

// Stream streams the chain's reply to p, as Complete answers it.
func (ib *intercepted) Stream(ctx context.Context, p *Params) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		r, err := ib.call(ctx, p, true)
		if err != nil {
			yield(Delta{}, err)
			return
		}
		var src iter.Seq2[Delta, error]
		if r.Own {
			src = Deltas(ctx, fixed{own(r)}, p)
		} else {
			src = Deltas(ctx, ib.b, p)
		}
		for d, err := range pipeline.InterceptStream(ctx, r, src, deltaTexts) {
			if !yield(d, err) || err != nil {
				return
			}
		}
	}
}

// deltaTexts is what pipeline.InterceptStream needs to know of a Delta.
var deltaTexts = pipeline.Texts[Delta]{
	Text: func(d *Delta) (int, *string) {
		if d.Text == "" {
			return 0, nil
		}
		return 0, &d.Text
	},
	Usage: func(d *Delta) (pipeline.Usage, bool) {
		if d.Usage == nil {
			return pipeline.Usage{}, false
		}
		return pipeline.Usage{Input: int64(d.Usage.InputTokens), Output: int64(d.Usage.OutputTokens)}, true
	},
	UsageDelta: func(u pipeline.Usage) Delta {
		return Delta{Usage: &Usage{InputTokens: pipeline.Tokens(u.Input), OutputTokens: pipeline.Tokens(u.Output)}}
	},
}

// fixed is a Backend that answers with one Result.
type fixed struct{ res *Result }

func (f fixed) Complete(context.Context, *Params) (*Result, error) { return f.res, nil }
