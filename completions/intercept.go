package completions

import (
	"strings"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/choices"
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
var completionsFamily = choices.Family("completions", choices.Types[*Params, Result, Output, Delta]{
	Call:   func(p *Params) (string, any, int) { return p.Request.Model, p.Request, p.Request.Choices() },
	Result: func(res *Result) (*[]Output, *endpoint.Usage) { return &res.Choices, &res.Usage },
	Text:   func(o *Output) *string { return &o.Text },
	Delta:  func(d *Delta) (*int, *string, **endpoint.Usage) { return &d.Choice, &d.Text, &d.Usage },
}, Deltas)
