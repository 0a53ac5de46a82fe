package completions

import (
	"github.com/go-playground/validator/v10"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// validate checks req against the validate tags of Request, then bounds
// the number of choices of a batch.
func validate(v *validator.Validate, req *Request) error {
	if err := validation.Struct(v, req); err != nil {
		return err
	}
	if n := req.Choices(); n > MaxChoices {
		return apierrors.InvalidRequestf("n", "n times the number of prompts must be at most %d, got %d × %d", MaxChoices, req.PerPrompt(), len(req.Prompt))
	}
	return nil
}
