package chat

import (
	"context"
	"iter"
	"strings"

	"github.com/gatewaykit/gatewaykit/internal/chatchain"
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

// intercept returns b with chain, the interceptors of a handler's
// endpoint.WithInterceptors, run around each of its replies, the calls
// named family: how the handlers over a Backend (chat's, and through
// package chatchain those of messages and gemini) run their
// interceptors. A nil chain returns b itself.
func intercept(b Backend, family string, chain pipeline.Chain) Backend {
	if chain == nil {
		return b
	}
	f := chatFamily
	f.Name = family
	return &intercepted{pipeline.Intercepted[*Params, *Result, Delta]{B: b, Chain: chain, F: &f}}
}

func init() {
	chatchain.Wrap = func(b any, family string, chain pipeline.Chain) any {
		return intercept(b.(Backend), family, chain)
	}
}

// intercepted is a Backend whose replies go through a chain of
// interceptors (see pipeline.Intercepted).
type intercepted struct {
	pipeline.Intercepted[*Params, *Result, Delta]
}

// chatFamily is what pipeline.Intercepted needs to know of this
// package's types.
var chatFamily = pipeline.Family[*Params, *Result, Delta]{
	Call: func(p *Params) (string, any) { return p.Request.Model, p.Request },
	// An interceptor's own reply: its text as every choice's content.
	Own: func(p *Params, r *pipeline.Reply) *Result {
		res := &Result{Choices: make([]Output, p.Request.Choices()),
			Usage: Usage{PromptTokens: pipeline.Tokens(r.Usage.Input), CompletionTokens: pipeline.Tokens(r.Usage.Output)}}
		for i := range res.Choices {
			res.Choices[i].Content = r.Text
		}
		return res
	},
	Deltas: func(ctx context.Context, b pipeline.Completer[*Params, *Result], p *Params) iter.Seq2[Delta, error] {
		return Deltas(ctx, b, p)
	},
	Texts: func(res *Result, f func(int, *string)) {
		if res != nil {
			for i := range res.Choices {
				f(i, &res.Choices[i].Content)
			}
		}
	},
	Usage: func(res *Result) pipeline.Usage {
		if res == nil {
			return pipeline.Usage{}
		}
		return pipeline.Usage{Input: int64(res.Usage.PromptTokens), Output: int64(res.Usage.CompletionTokens)}
	},
	SetUsage: func(res *Result, u pipeline.Usage) {
		if res != nil {
			res.Usage.PromptTokens, res.Usage.CompletionTokens = pipeline.Tokens(u.Input), pipeline.Tokens(u.Output)
		}
	},
	Delta: func(d *Delta) (int, *string, pipeline.Usage, bool) {
		if d.Usage == nil {
			return d.Choice, &d.Content, pipeline.Usage{}, false
		}
		return d.Choice, &d.Content, pipeline.Usage{Input: int64(d.Usage.PromptTokens), Output: int64(d.Usage.CompletionTokens)}, true
	},
	UsageDelta: func(u pipeline.Usage) Delta {
		return Delta{Usage: &Usage{PromptTokens: pipeline.Tokens(u.Input), CompletionTokens: pipeline.Tokens(u.Output)}}
	},
}
