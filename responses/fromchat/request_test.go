package fromchat_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
)

// TestChatParams translates responses requests (and stored
// conversations) into chat requests, and checks the chat request's JSON.
func TestChatParams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		history string // a JSON array of items, or ""
		request string
		want    string
	}{
		{"a string input", "",
			`{"model":"m","input":"Hi"}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`},
		{"instructions, sampling and the output cap", "",
			`{"model":"m","instructions":"Be brief.","temperature":0.5,"top_p":0.9,"max_output_tokens":64,"input":"Hi"}`,
			`{"model":"m","temperature":0.5,"top_p":0.9,"max_completion_tokens":64,
			  "messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]}`},
		{"empty instructions are no message", "",
			`{"model":"m","instructions":"","input":"Hi"}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`},
		{"message parts", "",
			`{"model":"m","input":[
			  {"role":"developer","content":"Answer in French."},
			  {"type":"message","role":"user","content":[{"type":"input_text","text":"What is this?"},
			    {"type":"input_image","image_url":"https://example.com/cat.png","detail":"low"}]},
			  {"type":"message","role":"assistant","id":"msg_1","status":"completed","content":[
			    {"type":"output_text","text":"A cat.","annotations":[]},{"type":"refusal","refusal":"No more."}]}]}`,
			`{"model":"m","messages":[
			  {"role":"developer","content":"Answer in French."},
			  {"role":"user","content":[{"type":"text","text":"What is this?"},
			    {"type":"image_url","image_url":{"url":"https://example.com/cat.png","detail":"low"}}]},
			  {"role":"assistant","content":"A cat.\nNo more."}]}`},
		{"a tool call and its output", "",
			`{"model":"m","input":[{"role":"user","content":"Weather?"},
			  {"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
			  {"type":"function_call_output","call_id":"call_1","output":"18 C"},
			  {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"rain"}]}]}`,
			`{"model":"m","messages":[{"role":"user","content":"Weather?"},
			  {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
			  {"role":"tool","content":"18 C","tool_call_id":"call_1"},
			  {"role":"tool","content":"rain","tool_call_id":"call_2"}]}`},
		{"an assistant turn of text and two calls is one message", "",
			`{"model":"m","input":[{"role":"assistant","content":"Let me look."},
			  {"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
			  {"type":"function_call","call_id":"b","name":"g","arguments":"{}"}]}`,
			`{"model":"m","messages":[{"role":"assistant","content":"Let me look.","tool_calls":[
			  {"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},
			  {"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}]}`},
		{"the stored conversation, then the input, without reasoning items",
			`[{"type":"message","id":"msg_a","role":"user","status":"completed","content":[{"type":"input_text","text":"My name is Ada."}]},
			  {"type":"reasoning","id":"rs_a","summary":[{"type":"summary_text","text":"A name."}]},
			  {"type":"message","id":"msg_b","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Hello, Ada."}]}]`,
			`{"model":"m","instructions":"Be brief.","input":[{"type":"reasoning","id":"rs_x","encrypted_content":"gAAA","summary":[]},
			  {"role":"user","content":"What is my name?"}]}`,
			`{"model":"m","messages":[{"role":"system","content":"Be brief."},
			  {"role":"user","content":[{"type":"text","text":"My name is Ada."}]},
			  {"role":"assistant","content":"Hello, Ada."},
			  {"role":"user","content":"What is my name?"}]}`},
		{"function tools and a named tool choice", "",
			`{"model":"m","input":"Hi","tool_choice":{"type":"function","name":"f"},
			  "tools":[{"type":"function","name":"f","description":"Does f.","parameters":{"type":"object"},"strict":true}]}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}],
			  "tools":[{"type":"function","function":{"name":"f","description":"Does f.","parameters":{"type":"object"},"strict":true}}],
			  "tool_choice":{"type":"function","function":{"name":"f"}}}`},
		{"a tool choice mode", "",
			`{"model":"m","input":"Hi","tool_choice":"required","tools":[{"type":"function","name":"f"}]}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`},
		{"a tool choice without tools is dropped", "",
			`{"model":"m","input":"Hi","tool_choice":"none"}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`},
		{"json_schema output and verbosity", "",
			`{"model":"m","input":"Hi","text":{"verbosity":"low","format":{"type":"json_schema","name":"reply","description":"A reply.","schema":{"type":"object"},"strict":true}}}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}],"verbosity":"low",
			  "response_format":{"type":"json_schema","json_schema":{"name":"reply","description":"A reply.","schema":{"type":"object"},"strict":true}}}`},
		{"json_object output", "",
			`{"model":"m","input":"Hi","text":{"format":{"type":"json_object"}}}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}],"response_format":{"type":"json_object"}}`},
		{"text output is the default", "",
			`{"model":"m","input":"Hi","text":{"format":{"type":"text"}}}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`},
		{"the members with a chat equivalent, and no others", "",
			`{"model":"m","input":"Hi","reasoning":{"effort":"low","summary":"auto"},"parallel_tool_calls":false,
			  "user":"u1","safety_identifier":"s1","prompt_cache_key":"k1","service_tier":"flex","seed":7,"top_k":40,
			  "presence_penalty":0.1,"frequency_penalty":0.2,
			  "metadata":{"a":"b"},"store":false,"include":["reasoning.encrypted_content"],"truncation":"auto","max_tool_calls":3,
			  "previous_response_id":"resp_1","top_logprobs":2}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}],"reasoning_effort":"low","parallel_tool_calls":false,
			  "user":"u1","safety_identifier":"s1","prompt_cache_key":"k1","service_tier":"flex","seed":7,"top_k":40,
			  "presence_penalty":0.1,"frequency_penalty":0.2}`},
		{"parallel tool calls are chat's default", "",
			`{"model":"m","input":"Hi","parallel_tool_calls":true,"reasoning":{"summary":"auto"}}`,
			`{"model":"m","messages":[{"role":"user","content":"Hi"}]}`},
		{"a stream asks for the usage", "",
			`{"model":"m","input":"Hi","stream":true}`,
			`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hi"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := params(t, tc.history, tc.request)
			before, err := json.Marshal(p.Request)
			require.NoError(t, err)
			cp, err := fromchat.ChatParams(p)
			require.NoError(t, err)
			require.Same(t, p.Model, cp.Model)
			got, err := json.Marshal(cp.Request)
			require.NoError(t, err)
			if diff := cmp.Diff(decodeJSON(t, tc.want), decodeJSON(t, string(got))); diff != "" {
				t.Errorf("chat request mismatch (-want +got):\n%s", diff)
			}
			after, err := json.Marshal(p.Request)
			require.NoError(t, err)
			require.JSONEq(t, string(before), string(after), "the responses request is left as it was")
		})
	}
}

// TestChatParamsRefuses checks the 400 of each request that the chat
// format cannot carry: its param and its message.
func TestChatParamsRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, history, request string
		param, message         string
	}{
		{"a hosted tool", "",
			`{"model":"m","input":"Hi","tools":[{"type":"function","name":"f"},{"type":"web_search"}]}`,
			"tools[1].type", `tools[1]: "web_search" tools are not supported by this model`},
		{"a tool choice of another type", "",
			`{"model":"m","input":"Hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[]}}`,
			"tool_choice.type", `tool_choice: "allowed_tools" is not supported by this model`},
		{"an item reference", "",
			`{"model":"m","input":[{"role":"user","content":"Hi"},{"type":"item_reference","id":"msg_1"}]}`,
			"input[1].type", `input[1]: "item_reference" items are not supported by this model`},
		{"a compaction item", "",
			`{"model":"m","input":[{"type":"compaction","encrypted_content":"x"},{"role":"user","content":"Hi"}]}`,
			"input[0].type", `input[0]: "compaction" items are not supported by this model`},
		{"a file part", "",
			`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"Read this."},{"type":"input_file","file_data":"data:application/pdf;base64,AA=="}]}]}`,
			"input[0].content[1].type", `input[0].content[1]: "input_file" parts are not supported by this model`},
		{"an image by file id", "",
			`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file_1"}]}]}`,
			"input[0].content[0].file_id", `input[0].content[0]: images by file_id are not supported by this model; send image_url`},
		{"a hosted tool call in the stored conversation",
			`[{"type":"message","role":"user","content":"Search."},{"type":"web_search_call","id":"ws_1","status":"completed"}]`,
			`{"model":"m","input":"Hi"}`,
			"previous_response_id", `previous_response_id: the conversation holds "web_search_call" items, which this model cannot read`},
		{"a file in the stored conversation",
			`[{"type":"message","role":"user","content":[{"type":"input_file","file_id":"file_1"}]}]`,
			`{"model":"m","input":"Hi"}`,
			"previous_response_id", `previous_response_id: the conversation holds content that this model cannot read: "input_file" parts are not supported by this model`},
		{"nothing but reasoning", "",
			`{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]}]}`,
			"input", `input: the conversation holds no message that this model can read`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := fromchat.ChatParams(params(t, tc.history, tc.request))
			var e *apierrors.Error
			require.True(t, errors.As(err, &e), "%v", err)
			require.Equal(t, 400, e.Status)
			require.Equal(t, apierrors.CodeInvalidRequest, e.Code)
			require.Equal(t, tc.param, e.Param)
			require.Equal(t, tc.message, e.Message)
		})
	}
}

// params decodes a request, and a stored conversation when history is
// not "", into the Params of a model "m".
func params(t testing.TB, history, request string) *responses.Params {
	t.Helper()
	p := &responses.Params{Request: &responses.Request{}, Model: &models.Model{ID: "m"}}
	require.NoError(t, json.Unmarshal([]byte(request), p.Request))
	if history != "" {
		require.NoError(t, json.Unmarshal([]byte(history), &p.History))
	}
	return p
}
