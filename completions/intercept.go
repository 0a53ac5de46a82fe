package completions

import (
	"context"
	"iter"
	"strings"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// PromptText returns the text of r's prompts, each on a line of its
// own: the text that interceptors see as the prompt (endpoint.Prompter).
func (r *Request) PromptText() string { return strings.Join(r.Prompt, "\n") }

// intercept returns b with chain, the interceptors of the handler's
// endpoint.WithInterceptors, run around its replies; b itself if chain
// is nil.
func intercept(b Backend, chain pipeline.Chain) Backend {
	if chain == nil {
		return b
	}
	return &intercepted{pipeline.Intercepted[*Params, *Result, Delta]{B: b, Chain: chain, F: &completionsFamily}}
}

// intercepted is a Backend whose replies go through a chain of
// interceptors (see pipeline.Intercepted).
type intercepted struct {
	pipeline.Intercepted[*Params, *Result, Delta]
}

// completionsFamily is what pipeline.Intercepted needs to know of this
// package's types.
var completionsFamily = pipeline.Family[*Params, *Result, Delta]{
	Name: "completions",
	Call: func(p *Params) (string, any) { return p.Request.Model, p.Request },
	// An interceptor's own reply: its text as every choice's.
	Own: func(p *Params, r *pipeline.Reply) *Result {
		res := &Result{Choices: make([]Output, p.Request.Choices()),
			Usage: endpoint.Usage{PromptTokens: pipeline.Tokens(r.Usage.Input), CompletionTokens: pipeline.Tokens(r.Usage.Output)}}
		for i := range res.Choices {
			res.Choices[i].Text = r.Text
		}
		return res
	},
	Deltas: func(ctx context.Context, b pipeline.Completer[*Params, *Result], p *Params) iter.Seq2[Delta, error] {
		return Deltas(ctx, b, p)
	},
	Texts: func(res *Result, f func(int, *string)) {
		if res != nil {
			for i := range res.Choices {
				f(i, &res.Choices[i].Text)
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
			return d.Choice, &d.Text, pipeline.Usage{}, false
		}
		return d.Choice, &d.Text, pipeline.Usage{Input: int64(d.Usage.PromptTokens), Output: int64(d.Usage.CompletionTokens)}, true
	},
	UsageDelta: func(u pipeline.Usage) Delta {
		return Delta{Usage: &endpoint.Usage{PromptTokens: pipeline.Tokens(u.Input), CompletionTokens: pipeline.Tokens(u.Output)}}
	},
}
