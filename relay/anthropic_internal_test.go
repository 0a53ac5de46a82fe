package relay

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestAnthropicRequest: the translation of chat requests into the
// messages format, and what it refuses.
func TestAnthropicRequest(t *testing.T) {
	t.Parallel()
	reasoner := &models.Model{ID: "m", Reasoning: true}
	capped := &models.Model{ID: "m", OutputTokenLimit: 321}
	for _, tc := range []struct {
		name   string
		chat   string
		model  *models.Model
		stream bool
		want   string // the messages request, as JSON
		param  string // of the 400, instead
	}{
		{"system, developer, sampling", `{"model":"m","messages":[{"role":"system","content":"A"},{"role":"developer","content":"B"},{"role":"user","content":"hi"}],"temperature":1.7,"top_p":0.5,"stop":["x","y"],"top_k":4,"user":"u9"}`, nil, true,
			`{"model":"up","max_tokens":4096,"system":"A\n\nB","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"stop_sequences":["x","y"],"stream":true,"temperature":1,"top_p":0.5,"top_k":4,"metadata":{"user_id":"u9"}}`, ""},
		{"images and the model's cap", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}]}`, capped, false,
			`{"model":"up","max_tokens":321,"messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}`, ""},
		{"tool round trip", `{"model":"m","max_completion_tokens":50,"messages":[{"role":"user","content":"w?"},{"role":"assistant","content":"let me see","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","type":"function","function":{"name":"f","arguments":""}}]},{"role":"tool","tool_call_id":"c1","content":"one"},{"role":"tool","tool_call_id":"c2","content":"two"},{"role":"user","content":"so?"}],"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false}`, nil, false,
			`{"model":"up","max_tokens":50,"messages":[{"role":"user","content":[{"type":"text","text":"w?"}]},
			  {"role":"assistant","content":[{"type":"text","text":"let me see"},{"type":"tool_use","id":"c1","name":"f","input":{"a":1}},{"type":"tool_use","id":"c2","name":"f","input":{}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"one"},{"type":"tool_result","tool_use_id":"c2","content":"two"},{"type":"text","text":"so?"}]}],
			  "tools":[{"name":"f","description":"d","input_schema":{"type":"object"}}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true}}`, ""},
		{"tool choices", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`, nil, false,
			`{"model":"up","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"name":"f","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"any"}}`, ""},
		{"tool choice none", `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"}`, nil, false,
			`{"model":"up","max_tokens":4096,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"name":"f","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"none"}}`, ""},
		{"reasoning effort", `{"model":"m","max_tokens":100,"reasoning_effort":"high","messages":[{"role":"user","content":"hi"}]}`, reasoner, false,
			`{"model":"up","max_tokens":16484,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"thinking":{"type":"enabled","budget_tokens":16384}}`, ""},
		{"reasoning effort on another model", `{"model":"m","max_tokens":100,"reasoning_effort":"high","messages":[{"role":"user","content":"hi"}]}`, nil, false,
			`{"model":"up","max_tokens":100,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, ""},
		{"n", `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`, nil, false, "", "n"},
		{"arguments not an object", `{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`, nil, false, "", "messages[0].tool_calls[0].function.arguments"},
		{"top_k not an integer", `{"model":"m","top_k":"x","messages":[{"role":"user","content":"hi"}]}`, nil, false, "", "top_k"},
		{"a file part", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"f"}}]}]}`, nil, false, "", "messages[0].content[0].type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var req chat.Request
			require.NoError(t, json.Unmarshal([]byte(tc.chat), &req))
			got, err := anthropicRequest(&chat.Params{Request: &req, Model: tc.model}, "up", tc.stream)
			if tc.param != "" {
				e := apierrors.From(err)
				require.Equal(t, 400, e.Status, "%v", err)
				require.Equal(t, tc.param, e.Param)
				return
			}
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
		})
	}
}

// TestAnthropicResult: a reply's blocks, stop reason and usage.
func TestAnthropicResult(t *testing.T) {
	t.Parallel()
	cached := 4
	var reply messages.Reply
	require.NoError(t, json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"up","content":[
		{"type":"thinking","thinking":"a","signature":"s"},{"type":"redacted_thinking","data":"x"},{"type":"text","text":"b"},{"type":"text","text":"c"},
		{"type":"tool_use","id":"t1","name":"f","input":{"k":"v"}}],"stop_reason":"max_tokens","stop_sequence":null,
		"usage":{"input_tokens":10,"cache_read_input_tokens":4,"output_tokens":7}}`), &reply))
	res, err := anthropicResult(&reply, &Upstream{Name: "up"})
	require.NoError(t, err)
	require.Equal(t, &chat.Result{Choices: []chat.Output{{
		Content: "bc", Reasoning: "a", FinishReason: chat.FinishLength,
		ToolCalls: []chat.ToolCall{{ID: "t1", Type: "function", Function: chat.FunctionCall{Name: "f", Arguments: `{"k":"v"}`}}},
	}}, Usage: chat.Usage{PromptTokens: 10 + cached, CompletionTokens: 7, TotalTokens: 21,
		PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: cached}}}, res)
}
