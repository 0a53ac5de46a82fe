package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Require is the model prerequisite check of spec §1 that every generation
// handler runs before calling its backend: the model named id must be in
// the catalogue, the caller must be allowed to use it, and it must list the
// endpoint type need. It returns the model, or an error to render with
// [apierrors.Renderer.Write]:
//
//   - id is empty: 400 invalid_request_error, param "model",
//     message "model is required".
//   - the model is not in c, or allow rejects it: 404 model_not_found,
//     param "model" ([apierrors.ModelNotFound]). The two cases are
//     indistinguishable to the client.
//   - the model lacks need: 400 invalid_request_error, param "model", with
//     a message naming the missing type and the model's types.
//   - c fails: 500 internal_server_error ([apierrors.Internal]; the cause
//     is logged, not sent). Three kinds of failure pass through unchanged
//     instead: an [*apierrors.Error] (a remote catalogue may have its own
//     answer), context.Canceled (the client has gone, so the renderer
//     writes nothing) and context.DeadlineExceeded (504 gateway_timeout).
//
// When it finds the model, Require records its id in ctx's
// [telemetry.Info], if ctx carries one (telemetry.SetModel), so that
// metrics and traces name the model of every generation request.
//
// allow may be nil, which allows every model. need may be empty, which
// skips the endpoint-type check.
func Require(ctx context.Context, c Catalog, id string, need EndpointType, allow AllowFunc) (*Model, error) {
	if id == "" {
		return nil, apierrors.InvalidRequest("model", "model is required")
	}
	if !allow.allows(ctx, id) {
		return nil, apierrors.ModelNotFound(id)
	}
	m, err := c.Get(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, apierrors.ModelNotFound(id).WithCause(err)
	case err != nil:
		return nil, catalogError(fmt.Errorf("models: get %q: %w", id, err))
	}
	if need != "" && !m.Supports(need) {
		return nil, apierrors.InvalidRequestf("model",
			"model %s does not support endpoint type %s (supported_endpoint_types: %s)",
			apierrors.Quote(id), apierrors.Quote(string(need)), typeList(m.EndpointTypes))
	}
	telemetry.SetModel(ctx, m.ID)
	return m, nil
}

// catalogError turns a failure of the catalogue into the error to render.
func catalogError(err error) error {
	var apiErr *apierrors.Error
	if errors.As(err, &apiErr) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return apierrors.Internal(err)
}

func typeList(ts []EndpointType) string {
	if len(ts) == 0 {
		return "none"
	}
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
