package messages

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAppendDeltaMatchesTheWireType holds the hand encoder of
// content_block_delta to encoding/json encoding the same Event, as the
// sse package would (without HTML escaping).
func TestAppendDeltaMatchesTheWireType(t *testing.T) {
	t.Parallel()
	strs := []string{"", "plain", `quo"te`, `back\slash`, "line\nbreak\r\ttab", "\x00\x1f\x7f", "<b>&amp;</b>", "é 中文 😀", "\u2028\u2029", "bad \xff utf8"}
	for _, s := range strs {
		for _, tc := range []struct {
			typ, member string
			delta       EventDelta
		}{
			{"text_delta", "text", EventDelta{Type: "text_delta", Text: s}},
			{"thinking_delta", "thinking", EventDelta{Type: "thinking_delta", Thinking: s}},
			{"input_json_delta", "partial_json", EventDelta{Type: "input_json_delta", PartialJSON: s}},
		} {
			if s == "" {
				continue // the wire type omits an empty member; the hand encoder does not
			}
			index := 3
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(Event{Type: EventContentBlockDelta, Index: &index, Delta: &tc.delta}))
			require.Equal(t, string(bytes.TrimSuffix(want.Bytes(), []byte("\n"))), string(appendDelta(nil, 3, tc.typ, tc.member, s)), "%q", s)
		}
	}
}
