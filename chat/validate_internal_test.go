package chat

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"
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
		Model               string             `json:"model" validate:"required"`
		Messages            []tagMessage       `json:"messages" validate:"required,min=1,dive"`
		Temperature         *float64           `json:"temperature" validate:"omitempty,gte=0,lte=2"`
		TopP                *float64           `json:"top_p" validate:"omitempty,gte=0,lte=1"`
		N                   *int               `json:"n" validate:"omitempty,gte=1,lte=128"`
		MaxTokens           *int               `json:"max_tokens" validate:"omitempty,gte=1"`
		MaxCompletionTokens *int               `json:"max_completion_tokens" validate:"omitempty,gte=1"`
		Stop                endpoint.Stop      `json:"stop" validate:"max=4"`
		Tools               []tagTool          `json:"tools" validate:"dive"`
		ResponseFormat      *tagResponseFormat `json:"response_format"`
	}
	tagMessage struct {
		Role       string        `json:"role" validate:"required,oneof=system developer user assistant tool"`
		ToolCalls  []tagToolCall `json:"tool_calls" validate:"omitempty,dive"`
		ToolCallID string        `json:"tool_call_id" validate:"required_if=Role tool"`
	}
	tagToolCall struct {
		ID       string `json:"id" validate:"required"`
		Type     string `json:"type" validate:"required,oneof=function"`
		Function struct {
			Name string `json:"name" validate:"required"`
		} `json:"function"`
	}
	tagTool struct {
		Type     string `json:"type" validate:"required,oneof=function"`
		Function *struct {
			Name string `json:"name" validate:"required"`
		} `json:"function" validate:"required"`
	}
	tagResponseFormat struct {
		Type       string `json:"type" validate:"required,oneof=text json_object json_schema"`
		JSONSchema *struct {
			Name string `json:"name" validate:"required"`
		} `json:"json_schema,omitempty" validate:"required_if=Type json_schema"`
	}
)

// FuzzCheckFieldsAgreesWithTheValidator checks checkFields against the
// validator on the tagged mirrors of the request's types.
func FuzzCheckFieldsAgreesWithTheValidator(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{
		`{"model":"m","messages":[]}`,
		`{"model":"m"}`,
		`{"model":"","messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"robot","content":"x"}]}`,
		`{"model":"m","messages":[{"content":"x"}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{}}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"1","type":"fn","function":{"name":"f"}}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f"}}]}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.5,"top_p":-1,"n":0,"max_tokens":0}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":-0.5}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"top_p":1.5}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"n":129,"max_completion_tokens":0,"stop":["a","b","c","d","e"]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"max_completion_tokens":0}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"function":{"name":"f"}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"other","function":{"name":"f"}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"text","json_schema":{}}}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"yaml"}}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{}}`,
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
		require.Equal(t, we.Message, ge.Message)
		require.Equal(t, we.Param, ge.Param)
	})
}
