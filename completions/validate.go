package completions

import (
	"github.com/go-playground/validator/v10"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// validate checks req in plain Go, in the order of its fields, then bounds
// the number of choices of a batch, then applies the rules of a validator
// given with endpoint.WithValidator. Its messages are those of package
// internal/validation, as for every endpoint.
func validate(v *validator.Validate, req *Request) error {
	switch {
	case req.Model == "":
		return validation.Required("model")
	case req.Prompt == nil:
		return validation.Required("prompt")
	case len(req.Prompt) == 0:
		return apierrors.InvalidRequest("prompt", "prompt must hold at least 1 items")
	}
	if err := validation.First(
		validation.Between("max_tokens", req.MaxTokens, 1, endpoint.MaxOutputTokens),
		validation.Between("temperature", req.Temperature, 0, 2),
		validation.Between("top_p", req.TopP, 0, 1),
		validation.Between("n", req.N, 1, endpoint.MaxChoices),
		validation.MaxItems("stop", len(req.Stop), endpoint.MaxStop),
	); err != nil {
		return err
	}
	if n := req.Choices(); n > MaxChoices {
		return apierrors.InvalidRequestf("n", "n times the number of prompts must be at most %d, got %d × %d", MaxChoices, req.PerPrompt(), len(req.Prompt))
	}
	return validation.Struct(v, req)
}
