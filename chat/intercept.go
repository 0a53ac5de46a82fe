package chat

import (
	"strings"

	"github.com/gatewaykit/gatewaykit/internal/chatchain"
	"github.com/gatewaykit/gatewaykit/internal/choices"
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
var chatFamily = choices.Family("chat", choices.Types[*Params, Result, Output, Delta]{
	Call:   func(p *Params) (string, any, int) { return p.Request.Model, p.Request, p.Request.Choices() },
	Result: func(res *Result) (*[]Output, *Usage) { return &res.Choices, &res.Usage },
	Text:   func(o *Output) *string { return &o.Content },
	Delta:  func(d *Delta) (*int, *string, **Usage) { return &d.Choice, &d.Content, &d.Usage },
}, Deltas)
