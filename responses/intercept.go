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

// intercept returns b with chain, the interceptors of the handler's
// endpoint.WithInterceptors, run around its replies; b itself if chain
// is nil. It answers POST /v1/responses; compaction asks the handler's
// backend itself, and runs no interceptor.
func intercept(b Backend, chain pipeline.Chain) Backend {
	if chain == nil {
		return b
	}
	return &intercepted{pipeline.Intercepted[*Params, *Result, Delta]{B: b, Chain: chain, F: &responsesFamily}}
}

// intercepted is a Backend whose replies go through a chain of
// interceptors (see pipeline.Intercepted).
type intercepted struct {
	pipeline.Intercepted[*Params, *Result, Delta]
}

// responsesFamily is what pipeline.Intercepted needs to know of this
// package's types. The text of a response is that of its messages, as
// one choice (0).
var responsesFamily = pipeline.Family[*Params, *Result, Delta]{
	Name: "responses",
	Call: func(p *Params) (string, any) { return p.Request.Model, p.Request },
	// An interceptor's own reply: one message of its text.
	Own: func(_ *Params, r *pipeline.Reply) *Result {
		return &Result{Output: []Output{{Text: r.Text}},
			Usage: Usage{InputTokens: pipeline.Tokens(r.Usage.Input), OutputTokens: pipeline.Tokens(r.Usage.Output)}}
	},
	Deltas: func(ctx context.Context, b pipeline.Completer[*Params, *Result], p *Params) iter.Seq2[Delta, error] {
		return Deltas(ctx, b, p)
	},
	Texts: func(res *Result, f func(int, *string)) {
		if res == nil {
			return
		}
		for i := range res.Output {
			if o := &res.Output[i]; o.Call == nil && o.Reasoning == "" {
				f(0, &o.Text)
			}
		}
	},
	Usage: func(res *Result) pipeline.Usage {
		if res == nil {
			return pipeline.Usage{}
		}
		return pipeline.Usage{Input: int64(res.Usage.InputTokens), Output: int64(res.Usage.OutputTokens)}
	},
	SetUsage: func(res *Result, u pipeline.Usage) {
		if res != nil {
			res.Usage.InputTokens, res.Usage.OutputTokens = pipeline.Tokens(u.Input), pipeline.Tokens(u.Output)
		}
	},
	Delta: func(d *Delta) (int, *string, pipeline.Usage, bool) {
		var text *string
		if d.Text != "" {
			text = &d.Text
		}
		if d.Usage == nil {
			return 0, text, pipeline.Usage{}, false
		}
		return 0, text, pipeline.Usage{Input: int64(d.Usage.InputTokens), Output: int64(d.Usage.OutputTokens)}, true
	},
	UsageDelta: func(u pipeline.Usage) Delta {
		return Delta{Usage: &Usage{InputTokens: pipeline.Tokens(u.Input), OutputTokens: pipeline.Tokens(u.Output)}}
	},
}
