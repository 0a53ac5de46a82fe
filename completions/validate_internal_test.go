package completions

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// tagRequest holds the rules of validate as validator tags, on a mirror
// of Request: the oracle of FuzzValidateAgreesWithTheValidator, which
// checks that validate fails where the validator fails, naming the same
// field with the same words.
type tagRequest struct {
	Model       string        `json:"model" validate:"required"`
	Prompt      Prompt        `json:"prompt" validate:"required,min=1"`
	MaxTokens   *int          `json:"max_tokens" validate:"omitempty,gte=1"`
	Temperature *float64      `json:"temperature" validate:"omitempty,gte=0,lte=2"`
	TopP        *float64      `json:"top_p" validate:"omitempty,gte=0,lte=1"`
	N           *int          `json:"n" validate:"omitempty,gte=1,lte=128"`
	Stop        endpoint.Stop `json:"stop" validate:"max=4"`
}

func FuzzValidateAgreesWithTheValidator(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","prompt":"Once"}`,
		`{"model":"","prompt":"Once"}`,
		`{"model":"m"}`,
		`{"model":"m","prompt":[]}`,
		`{"model":"m","prompt":"x","max_tokens":0,"temperature":3}`,
		`{"model":"m","prompt":"x","temperature":-1}`,
		`{"model":"m","prompt":"x","top_p":2}`,
		`{"model":"m","prompt":"x","n":0}`,
		`{"model":"m","prompt":"x","n":129}`,
		`{"model":"m","prompt":"x","stop":["a","b","c","d","e"]}`,
		`{"model":"m","prompt":["a","b"],"n":100}`,
	} {
		f.Add([]byte(s))
	}
	v := validation.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		var (
			req    Request
			mirror tagRequest
		)
		if json.Unmarshal(body, &req) != nil || json.Unmarshal(body, &mirror) != nil {
			return
		}
		want, got := validation.Struct(v, &mirror), validate(nil, &req)
		if want == nil {
			if got != nil {
				// Only the bound of a batch is validate's own.
				require.Contains(t, got.Error(), "n times the number of prompts")
			}
			return
		}
		var we, ge *apierrors.Error
		require.ErrorAs(t, want, &we)
		require.ErrorAs(t, got, &ge, "the validator: %v", want)
		require.Equal(t, we.Message, ge.Message)
		require.Equal(t, we.Param, ge.Param)
	})
}
