package chat

import (
	"context"
	"iter"
	"strings"

	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// PromptText returns the text of r's messages, each message's text
// (Content.String) on a line of its own: the text that interceptors see
// as the prompt (endpoint.Prompter).
func (r *Request) PromptText() string {
	var b strings.Builder
	for i := range r.Messages {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(r.Messages[i].Content.String())
	}
	return b.String()
}

// Intercept returns b with chain, the interceptors of a handler's
// endpoint.WithInterceptors, run around each of its replies, the calls
// named family. It is how the handlers of this module that run over a
// Backend (chat, messages, gemini) run their interceptors; it is of no
// use outside the module, whose code cannot make a chain: give the
// interceptors to the handler. A nil chain returns b itself.
func Intercept(b Backend, family string, chain pipeline.Chain) Backend {
	if chain == nil {
		return b
	}
	return &intercepted{b: b, family: family, chain: chain}
}

// intercepted is a Backend whose replies go through a chain of
// interceptors.
type intercepted struct {
	b      Backend
	family string
	chain  pipeline.Chain
}

// call runs the chain for p.
func (ib *intercepted) call(ctx context.Context, p *Params, stream bool) (*pipeline.Reply, error) {
	return ib.chain(ctx, &pipeline.Call{Family: ib.family, Model: p.Request.Model, Stream: stream, Request: p.Request})
}

// own is the Result of an interceptor's own reply r: its text as every
// choice's content.
func own(p *Params, r *pipeline.Reply) *Result {
	res := &Result{Choices: make([]Output, p.Request.Choices()),
		Usage: Usage{PromptTokens: pipeline.Tokens(r.Usage.Input), CompletionTokens: pipeline.Tokens(r.Usage.Output)}}
	for i := range res.Choices {
		res.Choices[i].Content = r.Text
	}
	return res
}

// Complete answers p with the chain's reply: its error, its own reply,
// or the backend's, whose text goes through the edit hooks (a choice
// whose content a hook changes is encoded by the handler, the others as
// the upstream sent them) and whose usage goes through the done hooks.
func (ib *intercepted) Complete(ctx context.Context, p *Params) (*Result, error) {
	r, err := ib.call(ctx, p, false)
	if err != nil {
		return nil, err
	}
	var res *Result
	if r.Own {
		res = own(p, r)
	} else if res, err = ib.b.Complete(ctx, p); err != nil || res == nil {
		u := pipeline.Usage{}
		r.Done(ctx, &u, err)
		return res, err
	}
	for i := range res.Choices {
		res.Choices[i].Content = r.Edit(i, res.Choices[i].Content)
	}
	u := pipeline.Usage{Input: int64(pipeline.Count(res.Usage.PromptTokens)), Output: int64(pipeline.Count(res.Usage.CompletionTokens))}
	if r.Done(ctx, &u, nil) {
		res.Usage.PromptTokens, res.Usage.CompletionTokens = pipeline.Tokens(u.Input), pipeline.Tokens(u.Output)
	}
	return res, nil
}

// Stream streams the chain's reply to p: its error, its own reply, or
// the backend's stream, each delta's content through the edit hooks,
// then the done hooks, whose usage ends the stream if they change it.
func (ib *intercepted) Stream(ctx context.Context, p *Params) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		r, err := ib.call(ctx, p, true)
		if err != nil {
			yield(Delta{}, err)
			return
		}
		var src iter.Seq2[Delta, error]
		if r.Own {
			src = Deltas(ctx, fixed{own(p, r)}, p)
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
	Text: func(d *Delta) (int, *string) { return d.Choice, &d.Content },
	Usage: func(d *Delta) (pipeline.Usage, bool) {
		if d.Usage == nil {
			return pipeline.Usage{}, false
		}
		return pipeline.Usage{Input: int64(d.Usage.PromptTokens), Output: int64(d.Usage.CompletionTokens)}, true
	},
	UsageDelta: func(u pipeline.Usage) Delta {
		return Delta{Usage: &Usage{PromptTokens: pipeline.Tokens(u.Input), CompletionTokens: pipeline.Tokens(u.Output)}}
	},
}

// fixed is a Backend that answers with one Result.
type fixed struct{ res *Result }

func (f fixed) Complete(context.Context, *Params) (*Result, error) { return f.res, nil }
