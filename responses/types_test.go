package responses_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
)

// TestRequestKeepsUnmodelledFields decodes a request with fields that
// Request, Item, ContentPart and Tool do not model, and checks that it
// encodes back to the same JSON, as a relay forwards it.
func TestRequestKeepsUnmodelledFields(t *testing.T) {
	t.Parallel()
	const body = `{
		"model":"demo-chat",
		"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"Hi","cache_control":{"type":"ephemeral"}},{"type":"input_file","file_id":"file_1","filename":"a.pdf"}],"phase":"final"},
			{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking"}],"encrypted_content":"abc"},
			{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}","namespace":"ns"},
			{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"ok"}]},
			{"type":"item_reference","id":"msg_1"}
		],
		"instructions":"Be brief.",
		"temperature":0.2,
		"top_p":0.5,
		"max_output_tokens":100,
		"stream":true,
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"},"strict":true,"defer_loading":false},{"type":"web_search","search_context_size":"low"}],
		"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"}]},
		"parallel_tool_calls":false,
		"previous_response_id":"resp_1",
		"store":false,
		"metadata":{"k":"v"},
		"reasoning":{"effort":"low","summary":"auto"},
		"text":{"format":{"type":"json_schema","name":"x","schema":{}}},
		"truncation":"auto",
		"user":"u-1",
		"include":["reasoning.encrypted_content"],
		"prompt_cache_key":"pk",
		"service_tier":"flex"
	}`
	var req responses.Request
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	require.Equal(t, "demo-chat", req.Model)
	require.Len(t, req.Input.Items, 5)
	require.Equal(t, "reasoning", req.Input.Items[1].Kind())
	require.Equal(t, "allowed_tools", string(req.ToolChoice.Raw[9:22]))
	require.Empty(t, req.ToolChoice.Function)
	require.False(t, req.Stored())
	require.False(t, req.Parallel())
	require.Equal(t, 100, req.TokenLimit())
	require.Contains(t, req.Extra, "reasoning")
	out, err := json.Marshal(req)
	require.NoError(t, err)
	require.JSONEq(t, body, string(out))

	var compact responses.CompactRequest
	const compactBody = `{"model":"demo-chat","input":"Hi","previous_response_id":"resp_1","instructions":"x","prompt_cache_key":"pk"}`
	require.NoError(t, json.Unmarshal([]byte(compactBody), &compact))
	out, err = json.Marshal(compact)
	require.NoError(t, err)
	require.JSONEq(t, compactBody, string(out))
}

func TestInputAsItems(t *testing.T) {
	t.Parallel()
	items := responses.TextInput("Hi").AsItems()
	require.Len(t, items, 1)
	require.Equal(t, responses.ItemMessage, items[0].Kind())
	require.Equal(t, responses.RoleUser, items[0].Role)
	require.Equal(t, "Hi", items[0].Content.String())

	parts := responses.PartsContent(
		responses.ContentPart{Type: responses.PartInputText, Text: "a"},
		responses.ContentPart{Type: responses.PartInputImage, ImageURL: "https://example.com/a.png"},
		responses.ContentPart{Type: responses.PartOutputText, Text: "b"},
	)
	require.Equal(t, "a\nb", parts.String())
	require.Empty(t, responses.ItemsInput().AsItems())
	require.True(t, responses.Input{}.IsZero())
}
