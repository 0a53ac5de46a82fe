package relay

import (
	"context"
	"errors"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

func isAPIError(err error) bool {
	var e *apierrors.Error
	return errors.As(err, &e)
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
