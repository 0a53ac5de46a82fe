// Package bymodel sends the requests of examples/chi and examples/gin to
// one of two backends by model: the models whose ids start with "demo-"
// to the first, every other to the second (the relay). It stands in for
// a per-model router of the kit: a backend that wraps the relay this way
// answers with the members that the kit models, and leaves out those
// that the relay would pass through unchanged behind package gateway.
package bymodel

import (
	"context"
	"iter"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/responses"
)

// pick returns demo for a "demo-" model and other for any other.
func pick[B any](demo, other B, model string) B {
	if strings.HasPrefix(model, "demo-") {
		return demo
	}
	return other
}

// Chat is a chat backend over Demo and Other.
type Chat struct{ Demo, Other chat.Backend }

func (b Chat) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	return pick(b.Demo, b.Other, p.Request.Model).Complete(ctx, p)
}

func (b Chat) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return chat.Deltas(ctx, pick(b.Demo, b.Other, p.Request.Model), p)
}

// Completions is a completions backend over Demo and Other.
type Completions struct{ Demo, Other completions.Backend }

func (b Completions) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	return pick(b.Demo, b.Other, p.Request.Model).Complete(ctx, p)
}

func (b Completions) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	return completions.Deltas(ctx, pick(b.Demo, b.Other, p.Request.Model), p)
}

// Responses is a responses backend over Demo and Other.
type Responses struct{ Demo, Other responses.Backend }

func (b Responses) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	return pick(b.Demo, b.Other, p.Request.Model).Complete(ctx, p)
}

func (b Responses) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return responses.Deltas(ctx, pick(b.Demo, b.Other, p.Request.Model), p)
}
