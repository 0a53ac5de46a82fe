package videos

import (
	"context"
	"fmt"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// PromptText returns r's prompt: the text that interceptors see as the
// prompt (endpoint.Prompter).
func (r *CreateRequest) PromptText() string { return r.Prompt }

// PromptText returns r's prompt: the text that interceptors see as the
// prompt (endpoint.Prompter).
func (r *MultimodalRequest) PromptText() string { return r.Prompt }

// WithInterceptors adds interceptors that the handler runs at the
// creation of a task (POST /v1/videos and POST /v1/vendorai/videos), as
// every endpoint package's handler runs those of
// endpoint.WithInterceptors: the call (Family "videos", its model, the
// *CreateRequest or *MultimodalRequest) runs through them, the first
// given outermost, once the task's cost is reserved and before it is
// submitted. An interceptor may refuse it (its error is the answer, in
// the flat error shape of this package, and the reservation is
// released); an interceptor's own reply is a 500 (a task is not text).
// Done hooks are called once the creation is answered, with no usage
// (the task's cost is settled when it ends) and the error that failed
// it, if any. By default there are none.
func WithInterceptors(ics ...endpoint.Interceptor) Option {
	o := endpoint.WithInterceptors(ics...)
	return func(c *config) {
		// The option of package endpoint builds the chain on a
		// configuration of the endpoint packages, kept for this one.
		o.ApplyToChat(&c.intercept)
	}
}

// intercept runs the interceptors for the creation of a task of model
// from req; nil, nil without any.
func (h *handler) intercept(ctx context.Context, model string, req any) (*pipeline.Reply, error) {
	if h.cfg.intercept.Chain == nil {
		return nil, nil
	}
	rep, err := h.cfg.intercept.Chain(ctx, &pipeline.Call{Family: "videos", Model: model, Request: req})
	if err == nil && rep.Own {
		return nil, apierrors.Internal(fmt.Errorf("videos: an interceptor answered a call with a reply of its own, which videos cannot send"))
	}
	return rep, err
}

// of returns the request that r holds, as an interceptor's Call carries
// it: the *CreateRequest or the *MultimodalRequest.
func (r Request) of() any {
	if r.Multimodal != nil {
		return r.Multimodal
	}
	return r.Create
}
