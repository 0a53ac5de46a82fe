package messages_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

func decode(t *testing.T, body string) *messages.Request {
	t.Helper()
	var req messages.Request
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	return &req
}

// TestValidate: each rule of the format, with the param it names.
func TestValidate(t *testing.T) {
	t.Parallel()
	const msg = `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, body, param string
	}{
		{"valid", `{"model":"m","max_tokens":5,` + msg + `}`, ""},
		{"no model", `{"max_tokens":5,` + msg + `}`, "model"},
		{"no max_tokens", `{"model":"m",` + msg + `}`, "max_tokens"},
		{"no messages", `{"model":"m","max_tokens":5,"messages":[]}`, "messages"},
		{"system role", `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"hi"}]}`, "messages[0].role"},
		{"no content", `{"model":"m","max_tokens":5,"messages":[{"role":"user"}]}`, "messages[0].content"},
		{"tool_use from the user", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]}]}`, "messages[0].content[0].type"},
		{"document", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document"}]}]}`, "messages[0].content[0].type"},
		{"image without source", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image"}]}]}`, "messages[0].content[0].source"},
		{"image not an image", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"text/plain","data":"aGk="}}]}]}`, "messages[0].content[0].source"},
		{"image ftp url", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"ftp://x/y.png"}}]}]}`, "messages[0].content[0].source.url"},
		{"image url", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}`, ""},
		{"tool_use without id", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, "messages[0].content[0].id"},
		{"tool_use input array", `{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":[1]}]}]}`, "messages[0].content[0].input"},
		{"tool_result without id", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{"tool_result of a document", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"document"}]}]}]}`, "messages[0].content[0].content[0].type"},
		{"temperature", `{"model":"m","max_tokens":5,"temperature":1.5,` + msg + `}`, "temperature"},
		{"top_p", `{"model":"m","max_tokens":5,"top_p":-1,` + msg + `}`, "top_p"},
		{"top_k", `{"model":"m","max_tokens":5,"top_k":-1,` + msg + `}`, "top_k"},
		{"system image", `{"model":"m","max_tokens":5,"system":[{"type":"image"}],` + msg + `}`, "system[0].type"},
		{"server tool", `{"model":"m","max_tokens":5,"tools":[{"type":"web_search_20250305","name":"web_search"}],` + msg + `}`, "tools[0].type"},
		{"tool without name", `{"model":"m","max_tokens":5,"tools":[{"input_schema":{}}],` + msg + `}`, "tools[0].name"},
		{"tool schema not an object", `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":"x"}],` + msg + `}`, "tools[0].input_schema"},
		{"tool_choice unknown tool", `{"model":"m","max_tokens":5,"tools":[{"name":"f"}],"tool_choice":{"type":"tool","name":"g"},` + msg + `}`, "tool_choice.name"},
		{"tool_choice any without tools", `{"model":"m","max_tokens":5,"tool_choice":{"type":"any"},` + msg + `}`, "tool_choice"},
		{"tool_choice type", `{"model":"m","max_tokens":5,"tool_choice":{"type":"required"},` + msg + `}`, "tool_choice.type"},
		{"thinking budget", `{"model":"m","max_tokens":5000,"thinking":{"type":"enabled","budget_tokens":100},` + msg + `}`, "thinking.budget_tokens"},
		{"thinking budget above max_tokens", `{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2000},` + msg + `}`, "thinking.budget_tokens"},
		{"thinking type", `{"model":"m","max_tokens":5,"thinking":{"type":"on"},` + msg + `}`, "thinking.type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := messages.Validate(decode(t, tc.body))
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			e := apierrors.From(err)
			require.Equal(t, 400, e.Status, "%v", err)
			require.Equal(t, tc.param, e.Param)
			require.True(t, strings.HasPrefix(e.Message, tc.param), "the message names the field: %s", e.Message)
		})
	}
}

// TestToChat: the translation of a request into a chat request.
func TestToChat(t *testing.T) {
	t.Parallel()
	reasoner := &models.Model{ID: "r", Reasoning: true}
	for _, tc := range []struct {
		name  string
		body  string
		model *models.Model
		want  string // the chat request, as JSON
	}{
		{"string content and system",
			`{"model":"m","max_tokens":5,"system":"Be brief.","messages":[{"role":"user","content":"hi"}],"stop_sequences":["X"],"temperature":0.3,"top_p":0.9,"top_k":7,"metadata":{"user_id":"u1"}}`, nil,
			`{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}],"temperature":0.3,"top_p":0.9,"max_tokens":5,"stop":["X"],"top_k":7,"user":"u1"}`},
		{"system blocks joined",
			`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"A"},{"type":"text","text":"B","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"hi"}]}`, nil,
			`{"model":"m","messages":[{"role":"system","content":"A\nB"},{"role":"user","content":"hi"}],"max_tokens":5}`},
		{"images",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]}]}`, nil,
			`{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}],"max_tokens":5}`},
		{"tool round trip",
			`{"model":"m","max_tokens":5,"tools":[{"name":"f","description":"d","input_schema":{"type":"object"}},{"name":"g"}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":true},"messages":[
			 {"role":"user","content":"call f"},
			 {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"f","input":{"a":1}},{"type":"tool_use","id":"t2","name":"g","input":{}}]},
			 {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"one"}]},{"type":"tool_result","tool_use_id":"t2","content":"two","is_error":true},{"type":"text","text":"and?"}]}]}`, nil,
			`{"model":"m","messages":[{"role":"user","content":"call f"},
			 {"role":"assistant","content":"ok","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"t2","type":"function","function":{"name":"g","arguments":"{}"}}]},
			 {"role":"tool","content":"one","tool_call_id":"t1"},{"role":"tool","content":"(error) two","tool_call_id":"t2"},
			 {"role":"user","content":[{"type":"text","text":"and?"}]}],
			 "max_tokens":5,"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{}}}}],
			 "tool_choice":{"type":"function","function":{"name":"f"}},"parallel_tool_calls":false}`},
		{"tool choices",
			`{"model":"m","max_tokens":5,"tools":[{"name":"f"}],"tool_choice":{"type":"any"},"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}]}`, nil,
			`{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]}],"max_tokens":5,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}],"tool_choice":"required"}`},
		{"thinking on a reasoning model",
			`{"model":"r","max_tokens":9000,"stream":true,"thinking":{"type":"enabled","budget_tokens":8000},"messages":[{"role":"user","content":"hi"}]}`, reasoner,
			`{"model":"r","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true},"max_tokens":9000,"reasoning_effort":"medium"}`},
		{"thinking on another model is left out",
			`{"model":"m","max_tokens":9000,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`, nil,
			`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":9000}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := decode(t, tc.body)
			require.NoError(t, messages.Validate(req))
			got, err := json.Marshal(messages.ToChat(req, tc.model))
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
		})
	}
}

// TestStopReasons: the mapping both ways.
func TestStopReasons(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		finish chat.FinishReason
		stop   messages.StopReason
		back   chat.FinishReason
	}{
		{chat.FinishStop, messages.StopEndTurn, chat.FinishStop},
		{chat.FinishLength, messages.StopMaxTokens, chat.FinishLength},
		{chat.FinishToolCalls, messages.StopToolUse, chat.FinishToolCalls},
		{chat.FinishContentFilter, messages.StopRefusal, chat.FinishContentFilter},
		{"", messages.StopEndTurn, chat.FinishStop},
	} {
		require.Equal(t, tc.stop, messages.StopReasonOf(tc.finish))
		require.Equal(t, tc.back, messages.FinishReasonOf(tc.stop))
	}
	require.Equal(t, chat.FinishStop, messages.FinishReasonOf(messages.StopStopSequence))
	require.Equal(t, chat.FinishStop, messages.FinishReasonOf(messages.StopPauseTurn))
}
