package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
)

// FuzzGeminiChatBody checks that no chat request makes the translation
// into a Gemini-style request panic, and that what it makes is JSON that
// decodes as one.
func FuzzGeminiChatBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"ok"}],` +
			`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","n":2,"stop":"x","top_k":3,"seed":"bad"}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`,
		`{"model":"m","messages":[{"role":"tool","tool_call_id":"nope","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"r"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req chat.Request
		if json.Unmarshal(body, &req) != nil {
			return
		}
		out, err := geminiChatBody(&chat.Params{Request: &req})
		if err != nil {
			return
		}
		var g gemini.Request
		require.NoError(t, json.Unmarshal(out, &g), string(out))
	})
}

// FuzzGeminiReader checks that no upstream stream makes the reader panic,
// and that the deltas it hands on keep the chat backend contract: a
// choice in range, tool call indexes that begin at 0 and never skip, and
// nothing after a choice's finish reason.
func FuzzGeminiReader(f *testing.F) {
	f.Add(2, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]},\"index\":0}]}\r\n\r\n"+
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{}}}]},\"finishReason\":\"STOP\",\"index\":1}],\"usageMetadata\":{\"promptTokenCount\":1}}\r\n\r\n")
	f.Add(1, "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"t\",\"thought\":true}]},\"finishReason\":\"MAX_TOKENS\"}]}\n\ndata: {\"candidates\":[{\"index\":0,\"finishReason\":\"STOP\"}]}\n\n")
	f.Add(1, "data: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\",\"message\":\"x\"}}\n\n")
	f.Add(1, "data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n")
	f.Add(3, "data: {\"candidates\":[{\"index\":7}]}\n\n")
	f.Fuzz(func(t *testing.T, n int, body string) {
		n = 1 + (n&7+8)%8
		u := &Upstream{Name: "fuzz", API: APIGemini}
		req := &chat.Request{Model: "m", N: &n, Messages: []chat.Message{{Role: "user", Content: chat.TextContent("x")}}}
		gs := newGeminiReader(&chat.Params{Request: req}, u)
		finished := make([]bool, n)
		calls := make([]int, n)
		_ = gs.read(strings.NewReader(body), func(d chat.Delta) bool {
			if d.Usage != nil && d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 && d.FinishReason == "" {
				return true
			}
			require.GreaterOrEqual(t, d.Choice, 0)
			require.Less(t, d.Choice, n)
			require.False(t, finished[d.Choice], "a delta after the finish reason")
			for _, tc := range d.ToolCalls {
				require.Equal(t, calls[d.Choice], tc.Index)
				require.NotEmpty(t, tc.Name)
				calls[d.Choice]++
			}
			finished[d.Choice] = d.FinishReason != ""
			return true
		})
	})
}

// FuzzGeminiChatResult checks that no Gemini-style reply makes its
// translation into a chat result panic, and that a result has the choices
// asked for, each with a finish reason and tool calls whose arguments are
// JSON.
func FuzzGeminiChatResult(f *testing.F) {
	f.Add(1, `{"candidates":[{"content":{"parts":[{"text":"hi"},{"text":"t","thought":true},{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"c2ln"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":1,"totalTokenCount":6}}`)
	f.Add(2, `{"candidates":[{"index":1,"finishReason":"MAX_TOKENS"},{"index":0,"content":{"parts":[]}}]}`)
	f.Add(1, `{"promptFeedback":{"blockReason":"SAFETY"}}`)
	f.Add(1, `{"candidates":[{"index":3}]}`)
	f.Fuzz(func(t *testing.T, n int, body string) {
		n = 1 + (n&7+8)%8
		var reply gemini.Response
		if json.Unmarshal([]byte(body), &reply) != nil {
			return
		}
		req := &chat.Request{Model: "m", N: &n, Messages: []chat.Message{{Role: "user", Content: chat.TextContent("x")}}}
		res, err := geminiChatResult(&chat.Params{Request: req}, &reply, &Upstream{Name: "fuzz", API: APIGemini})
		if err != nil {
			return
		}
		require.Len(t, res.Choices, n)
		for _, o := range res.Choices {
			require.NotEmpty(t, o.FinishReason)
			for _, tc := range o.ToolCalls {
				require.True(t, json.Valid([]byte(tc.Function.Arguments)), tc.Function.Arguments)
			}
		}
	})
}

// FuzzDecodeGeminiEvent checks that the hand decoder of Gemini stream
// events agrees with encoding/json: whatever it accepts, encoding/json
// accepts too, and decodes to the same value.
func FuzzDecodeGeminiEvent(f *testing.F) {
	for _, s := range []string{
		`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":3,"totalTokenCount":3},"modelVersion":"m","responseId":"r"}`,
		`{"candidates":[{"content":{"parts":[{"text":"t","thought":true},{"text":"x"}],"role":"model"},"finishReason":"STOP","index":1,"safetyRatings":[]}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2,"thoughtsTokenCount":1,"totalTokenCount":6,"promptTokensDetails":[{"modality":"TEXT","tokenCount":3}]}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}]}`,
		`{"candidates":null,"usageMetadata":null,"modelVersion":null}`,
		`{"Candidates":[],"candidates":[]}`,
		`{"candidates":[{"content":{"parts":[{"text":"\u00e9\n","thought":false}]}}]} `,
		`{"error":{"code":500}}`,
		`{"candidates":[{"index":1e2}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast geminiEvent
		if !decodeGeminiEvent(data, &fast) {
			return
		}
		var slow geminiEvent
		require.NoError(t, json.Unmarshal(data, &slow), string(data))
		require.Equal(t, slow, fast, string(data))
	})
}
