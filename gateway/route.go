package gateway

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// The backends below send the models that a [relay.Relay] routes to its
// upstreams, and every other model to the backend they wrap (the demo
// backend, say). A nil wrapped backend is never asked: the catalogue
// lists only routed models then, and a model that is in the catalogue but
// in neither is answered by the relay, with model_not_found.

// byModel picks, per model, the relay's backend of a family or the one it
// wraps.
type byModel[B any] struct {
	relay    *relay.Relay
	relayed  B
	fallback B
	wrapped  bool // fallback is set
}

func newByModel[B comparable](r *relay.Relay, relayed, fallback B) byModel[B] {
	var none B
	return byModel[B]{relay: r, relayed: relayed, fallback: fallback, wrapped: fallback != none}
}

func (b byModel[B]) pick(model string) B {
	if !b.wrapped || b.relay.Serves(model) {
		return b.relayed
	}
	return b.fallback
}

type chatRouter struct{ byModel[chat.Backend] }

func (b chatRouter) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	return b.pick(p.Request.Model).Complete(ctx, p)
}

func (b chatRouter) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	return chat.Deltas(ctx, b.pick(p.Request.Model), p)
}

type completionsRouter struct{ byModel[completions.Backend] }

func (b completionsRouter) Complete(ctx context.Context, p *completions.Params) (*completions.Result, error) {
	return b.pick(p.Request.Model).Complete(ctx, p)
}

func (b completionsRouter) Stream(ctx context.Context, p *completions.Params) iter.Seq2[completions.Delta, error] {
	return completions.Deltas(ctx, b.pick(p.Request.Model), p)
}

type videoRouter struct{ byModel[videos.Generator] }

func (g videoRouter) Generate(ctx context.Context, t *videos.Task, progress func(int)) (*videos.Result, error) {
	return g.pick(t.Model).Generate(ctx, t, progress)
}

// Submit forwards to the routed generator when it is a videos.Submitter
// (the relay's is), so that relayed tasks are created upstream before
// the client is answered; other generators submit nothing.
func (g videoRouter) Submit(ctx context.Context, t *videos.Task) (string, error) {
	if s, ok := g.pick(t.Model).(videos.Submitter); ok {
		return s.Submit(ctx, t)
	}
	return "", nil
}

type responsesRouter struct{ byModel[responses.Backend] }

func (b responsesRouter) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	return b.pick(p.Request.Model).Complete(ctx, p)
}

func (b responsesRouter) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return responses.Deltas(ctx, b.pick(p.Request.Model), p)
}

func (b responsesRouter) Compact(ctx context.Context, p *responses.CompactParams) (*responses.CompactResult, error) {
	return responses.Compact(ctx, b.pick(p.Request.Model), p)
}
