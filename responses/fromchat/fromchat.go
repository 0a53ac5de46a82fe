package fromchat

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/responses"
)

// New returns a responses backend that answers over b: each request
// becomes the chat request of [ChatParams], b's reply becomes output
// items, and a streaming request streams b's reply ([chat.Deltas]: b's
// own stream when b is a [chat.StreamingBackend], else its whole reply in
// pieces). The package documentation says what maps to what.
//
// The backend is not a [responses.Compactor]: the responses handler
// answers POST /v1/responses/compact for it with its 400, param "model"
// (the model does not support compaction). It holds no state of its own:
// it is safe for concurrent use when b is, each call hands its context
// on to b, and a client that goes away cancels b's call. New panics if b
// is nil.
func New(b chat.Backend) responses.StreamingBackend {
	if b == nil {
		panic("fromchat: New: nil chat.Backend")
	}
	return backend{b}
}

type backend struct{ chat chat.Backend }

// Complete asks the chat backend for the whole reply.
func (b backend) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	cp, err := ChatParams(p)
	if err != nil {
		return nil, err
	}
	res, err := b.chat.Complete(ctx, cp)
	if err != nil {
		return nil, err
	}
	return result(res)
}

// Stream streams the chat backend's reply as output items.
func (b backend) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		cp, err := ChatParams(p)
		if err != nil {
			yield(responses.Delta{}, err)
			return
		}
		c := newCursor()
		for d, err := range chat.Deltas(ctx, b.chat, cp) {
			if err != nil {
				yield(responses.Delta{}, err)
				return
			}
			if !c.translate(&d, yield) {
				return
			}
		}
		c.finish(yield)
	}
}
