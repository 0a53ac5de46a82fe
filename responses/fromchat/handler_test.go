package fromchat_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// TestConversationThroughTheStore: the handler's store keeps the
// conversation, and the second turn's chat request carries the first
// turn's input and output before its own input (without the first
// turn's instructions, as in OpenAI's API), streamed or not.
func TestConversationThroughTheStore(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			t.Parallel()
			rec := &recorder{b: demoChat()}
			h := newHandler(over(rec), responses.WithStore(responses.NewMemoryStore(nil)))

			w := post(t, h, `{"model":"demo-chat","instructions":"Be brief.","input":"My name is Ada."}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			var first responses.Response
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &first))
			answer := first.Output[0].Text()
			require.NotEmpty(t, answer)

			w = post(t, h, fmt.Sprintf(`{"model":"demo-chat","stream":%v,"instructions":"Be kind.","previous_response_id":%q,"input":"What is my name?"}`, stream, first.ID))
			require.Equal(t, 200, w.Code, w.Body.String())
			want := fmt.Sprintf(`[{"role":"system","content":"Be kind."},
				{"role":"user","content":[{"type":"text","text":"My name is Ada."}]},
				{"role":"assistant","content":%q},
				{"role":"user","content":"What is my name?"}]`, answer)
			got := rec.last(t).(map[string]any)["messages"]
			if diff := cmp.Diff(decodeJSON(t, want), got); diff != "" {
				t.Errorf("the second turn's chat messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestToolCallRoundTrip: a function_call item of the reply comes back as
// an assistant tool call, and the function_call_output that answers it
// as a tool message, which the demo answers.
func TestToolCallRoundTrip(t *testing.T) {
	t.Parallel()
	rec := &recorder{b: demoChat()}
	h := newHandler(over(rec))
	const tools = `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]`

	w := post(t, h, `{"model":"demo-chat","input":"What is the weather in Paris? Use get_weather.",`+tools+`}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	var first responses.Response
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &first))
	require.Len(t, first.Output, 1)
	call := first.Output[0]
	require.Equal(t, responses.ItemFunctionCall, call.Type)
	require.Equal(t, "get_weather", call.Name)

	w = post(t, h, fmt.Sprintf(`{"model":"demo-chat","previous_response_id":%q,%s,
		"input":[{"type":"function_call_output","call_id":%q,"output":"{\"temperature\":\"18 C\"}"}]}`, first.ID, tools, call.CallID))
	require.Equal(t, 200, w.Code, w.Body.String())
	want := fmt.Sprintf(`[{"role":"user","content":[{"type":"text","text":"What is the weather in Paris? Use get_weather."}]},
		{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":"get_weather","arguments":%q}}]},
		{"role":"tool","tool_call_id":%q,"content":"{\"temperature\":\"18 C\"}"}]`, call.CallID, call.Arguments, call.CallID)
	if diff := cmp.Diff(decodeJSON(t, want), rec.last(t).(map[string]any)["messages"]); diff != "" {
		t.Errorf("the second turn's chat messages (-want +got):\n%s", diff)
	}
	var final responses.Response
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &final))
	require.Contains(t, final.Output[0].Text(), `The tool returned: "{"temperature":"18 C"}".`)
}

// TestHandlerRefusals: what the chat format cannot carry is a 400 in the
// general error shape, naming the param, and the chat backend is not
// asked; compaction is the handler's 400.
func TestHandlerRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, path, body string
		message, param   string
	}{
		{"a hosted tool", "/v1/responses", `{"model":"demo-chat","input":"Hi","tools":[{"type":"web_search"}]}`,
			`tools[0]: "web_search" tools are not supported by this model`, "tools[0].type"},
		{"a hosted tool, streamed", "/v1/responses", `{"model":"demo-chat","stream":true,"input":"Hi","tools":[{"type":"file_search"}]}`,
			`tools[0]: "file_search" tools are not supported by this model`, "tools[0].type"},
		{"a compaction item", "/v1/responses", `{"model":"demo-chat","input":[{"type":"compaction","encrypted_content":"x"}]}`,
			`input[0]: "compaction" items are not supported by this model`, "input[0].type"},
		{"an image by file id", "/v1/responses", `{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_image","file_id":"file_1"}]}]}`,
			"input[0].content[0]: images by file_id are not supported by this model; send image_url", "input[0].content[0].file_id"},
		{"compaction", "/v1/responses/compact", `{"model":"demo-chat","input":"Hi"}`,
			`model "demo-chat" does not support compaction`, "model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{b: demoChat()}
			w := endpointtest.Post(t, newHandler(over(rec)), tc.path, tc.body)
			endpointtest.RequireJSON(t, w, http.StatusBadRequest, endpointtest.ErrorBody(tc.message, "invalid_request_error", tc.param, "invalid_request_error"))
			require.Empty(t, rec.reqs, "the chat backend was asked")
		})
	}
}
