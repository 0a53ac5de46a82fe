package responses

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/internal/validation"
)

// The rules of checkFields, written as validator tags on mirrors of the
// request's types: the oracle of FuzzCheckFieldsAgreesWithTheValidator,
// which checks that checkFields fails where the validator fails, naming
// the same field with the same words (package internal/validation's).
type (
	tagRequest struct {
		Model           string            `json:"model" validate:"required"`
		Temperature     *float64          `json:"temperature" validate:"omitempty,gte=0,lte=2"`
		TopP            *float64          `json:"top_p" validate:"omitempty,gte=0,lte=1"`
		MaxOutputTokens *int              `json:"max_output_tokens" validate:"omitempty,gte=1"`
		Tools           []tagTool         `json:"tools" validate:"dive"`
		Text            *tagText          `json:"text"`
		Metadata        map[string]string `json:"metadata" validate:"omitempty,max=16,dive,keys,max=64,endkeys,max=512"`
	}
	tagTool struct {
		Type string `json:"type" validate:"required"`
		Name string `json:"name" validate:"required_if=Type function"`
	}
	tagText struct {
		Format *struct {
			Type string `json:"type" validate:"required,oneof=text json_object json_schema"`
			Name string `json:"name" validate:"required_if=Type json_schema"`
		} `json:"format" validate:"omitempty"`
	}
)

// FuzzCheckFieldsAgreesWithTheValidator checks checkFields against the
// validator on the tagged mirrors of the request's types. Where several
// metadata pairs are at fault the validator names one at random (it
// ranges over the map): only the failure itself is compared then.
func FuzzCheckFieldsAgreesWithTheValidator(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{
		`{"model":"","input":"x"}`,
		`{"model":"m","input":"x","temperature":2.5,"top_p":-1,"max_output_tokens":0}`,
		`{"model":"m","input":"x","temperature":2,"top_p":1,"max_output_tokens":1}`,
		`{"model":"m","input":"x","tools":[{"type":"function"}]}`,
		`{"model":"m","input":"x","tools":[{"name":"f"}]}`,
		`{"model":"m","input":"x","tools":[{"type":"web_search"}]}`,
		`{"model":"m","input":"x","text":{"format":{"type":"yaml"}}}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_schema"}}}`,
		`{"model":"m","input":"x","text":{"format":{"type":"json_object","name":""}}}`,
		`{"model":"m","input":"x","text":{"verbosity":"low"}}`,
		`{"model":"m","input":"x","metadata":{"a":"1","b":"1","c":"1","d":"1","e":"1","f":"1","g":"1","h":"1","i":"1","j":"1","k":"1","l":"1","m":"1","n":"1","o":"1","p":"1","q":"1"}}`,
		`{"model":"m","input":"x","metadata":{"` + strings.Repeat("é", 64) + `":"` + strings.Repeat("ü", 512) + `"}}`,
		`{"model":"m","input":"x","metadata":{"` + strings.Repeat("é", 65) + `":"v"}}`,
		`{"model":"m","input":"x","metadata":{"k":"` + strings.Repeat("a", 513) + `"}}`,
		`{"model":"m","input":"x","temperature":-1}`,
		`{"model":"m","input":"x","top_p":1.5}`,
		`{"model":"m","input":"x","text":{"format":{}}}`,
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
		want, got := validation.Struct(v, &mirror), checkFields(&req)
		if want == nil {
			require.NoError(t, got)
			return
		}
		require.Error(t, got, "the validator: %v", want)
		var we, ge *apierrors.Error
		require.ErrorAs(t, want, &we)
		require.ErrorAs(t, got, &ge)
		if strings.HasPrefix(we.Param, "metadata[") && badPairs(req.Metadata) > 1 {
			require.True(t, strings.HasPrefix(ge.Param, "metadata["), "%s against %s", ge.Param, we.Param)
			return
		}
		require.Equal(t, we.Message, ge.Message)
		require.Equal(t, we.Param, ge.Param)
	})
}

// badPairs counts the metadata pairs whose key or value is too long.
func badPairs(m map[string]string) int {
	n := 0
	for k, v := range m {
		if utf8.RuneCountInString(k) > MaxMetadataKey || utf8.RuneCountInString(v) > MaxMetadataValue {
			n++
		}
	}
	return n
}
