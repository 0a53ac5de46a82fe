package completions

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/endpoint"

	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

func marshal(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

var strs = []string{"", "plain", `quo"te\`, "ctl\n\r\t\b\f\x00\x1f", "<&>", "é 中文 😀", "\u2028\u2029", "bad \xff\xc3"}

func FuzzAppendString(f *testing.F) {
	for _, s := range strs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, marshal(t, s), string(jsonenc.AppendString(nil, s)))
	})
}

func TestEncodersMatchTheWireTypes(t *testing.T) {
	t.Parallel()
	u := endpoint.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}
	stop := endpoint.FinishStop
	for _, s := range strs {
		outs := []Output{{Text: s, FinishReason: endpoint.FinishLength}, {Text: "x"}}
		want := Completion{ID: "cmpl-1", Object: ObjectCompletion, Created: 7, Model: s, Usage: u,
			Choices: []Choice{{Index: 0, Text: s, FinishReason: endpoint.FinishLength}, {Index: 1, Text: "x", FinishReason: endpoint.FinishStop}}}
		require.Equal(t, marshal(t, want), string(appendCompletion(nil, "cmpl-1", 7, s, outs, &u)))

		prefix := appendChunkPrefix(nil, s, 7)
		require.Equal(t, marshal(t, Chunk{ID: s, Object: ObjectCompletion, Created: 7, Choices: []ChunkChoice{{Index: 2, Text: s}}}),
			string(appendChunkChoice(bytes.Clone(prefix), 2, s, "")))
		require.Equal(t, marshal(t, Chunk{ID: s, Object: ObjectCompletion, Created: 7, Choices: []ChunkChoice{{Text: "", FinishReason: &stop}}}),
			string(appendChunkChoice(bytes.Clone(prefix), 0, "", endpoint.FinishStop)))
		require.Equal(t, marshal(t, Chunk{ID: s, Object: ObjectCompletion, Created: 7, Choices: []ChunkChoice{}, Usage: &u}),
			string(appendUsageChunk(bytes.Clone(prefix), &u)))
	}
}
