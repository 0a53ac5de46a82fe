package chat

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

// marshal encodes v as the sse package and httpjson would with
// encoding/json, without HTML escaping.
func marshal(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func decode(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return v
}

var strs = []string{"", "plain", `quo"te`, `back\slash`, "line\nbreak\r\ttab", "\b\f\x00\x1f\x7f", "<b>&amp;</b>", "é ü 中文 😀", "\u2028\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80"}

func FuzzAppendString(f *testing.F) {
	for _, s := range strs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, string(marshal(t, s)), string(jsonenc.AppendString(nil, s)))
	})
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range strs {
		require.Equal(t, string(marshal(t, s)), string(jsonenc.AppendString(nil, s)), "%q", s)
	}
}

func TestAppendCompletionMatchesTheWireType(t *testing.T) {
	t.Parallel()
	for _, s := range strs {
		outs := []Output{
			{Content: s, Reasoning: s, FinishReason: FinishLength},
			{ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: s, Arguments: `{"a":"` + s + `"}`}}, {ID: "call_2", Type: "function", Function: FunctionCall{Name: "g"}}}, FinishReason: FinishToolCalls},
			{Content: "x", FinishReason: FinishStop},
		}
		u := Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3, CompletionTokensDetails: &CompletionTokensDetails{ReasoningTokens: 1}}
		got := appendCompletion(nil, "chatcmpl-1", 1700000000, s, outs, &u)
		want := Completion{ID: "chatcmpl-1", Object: ObjectCompletion, Created: 1700000000, Model: s, Usage: u}
		for i, o := range outs {
			msg := ChoiceMessage{Role: "assistant", ReasoningContent: o.Reasoning, ToolCalls: o.ToolCalls}
			if o.Content != "" || len(o.ToolCalls) == 0 {
				msg.Content = &o.Content
			}
			want.Choices = append(want.Choices, Choice{Index: i, Message: msg, FinishReason: o.FinishReason})
		}
		require.Equal(t, string(marshal(t, want)), string(got))
	}
}

func TestAppendChunkMatchesTheWireType(t *testing.T) {
	t.Parallel()
	calls := []ToolCallChunk{{Index: 0, ID: "call_1", Type: "function", Function: FunctionCallChunk{Name: "f"}}, {Index: 1, Function: FunctionCallChunk{Arguments: `{"a":1}`}}}
	stop := FinishStop
	for _, s := range strs {
		prefix := appendChunkPrefix(nil, "chatcmpl-1", 1700000000, s)
		tests := []struct {
			got  []byte
			want Chunk
		}{
			{appendChunkChoice(bytes.Clone(prefix), 3, true, s, s, calls, ""),
				Chunk{Choices: []ChunkChoice{{Index: 3, Delta: ChunkDelta{Role: "assistant", Content: s, ReasoningContent: s, ToolCalls: calls}}}}},
			{appendChunkChoice(bytes.Clone(prefix), 0, false, "", "", nil, FinishStop),
				Chunk{Choices: []ChunkChoice{{Delta: ChunkDelta{}, FinishReason: &stop}}}},
			{appendUsageChunk(bytes.Clone(prefix), &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}),
				Chunk{Choices: []ChunkChoice{}, Usage: &Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}}},
		}
		for _, tc := range tests {
			tc.want.ID, tc.want.Object, tc.want.Created, tc.want.Model = "chatcmpl-1", ObjectChunk, 1700000000, s
			require.Equal(t, string(marshal(t, tc.want)), string(tc.got))
			if diff := cmp.Diff(decode(t, marshal(t, tc.want)), decode(t, tc.got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}
	}
}
