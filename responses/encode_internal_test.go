package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// marshal encodes v as the sse package does, with encoding/json and
// without HTML escaping.
func marshal(t testing.TB, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return v
}

var strs = []string{"", "plain", `quo"te`, `back\slash`, "line\nbreak\r\ttab", "\x00\x1f", "<b>&amp;</b>", "é 中文 😀", "\u2028", "bad \xff utf8"}

// The wire shapes of the hand-encoded events, for encoding/json.
type (
	textEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		ContentIndex   int    `json:"content_index"`
		Delta          string `json:"delta,omitempty"`
		Text           string `json:"text,omitempty"`
		Logprobs       []any  `json:"logprobs"`
	}
	argumentsEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		ItemID         string `json:"item_id"`
		OutputIndex    int    `json:"output_index"`
		Delta          string `json:"delta,omitempty"`
		Arguments      string `json:"arguments,omitempty"`
		Name           string `json:"name,omitempty"`
	}
	partEvent struct {
		Type           string     `json:"type"`
		SequenceNumber int        `json:"sequence_number"`
		ItemID         string     `json:"item_id"`
		OutputIndex    int        `json:"output_index"`
		ContentIndex   int        `json:"content_index"`
		Part           OutputText `json:"part"`
	}
	summaryEvent struct {
		Type           string       `json:"type"`
		SequenceNumber int          `json:"sequence_number"`
		ItemID         string       `json:"item_id"`
		OutputIndex    int          `json:"output_index"`
		SummaryIndex   int          `json:"summary_index"`
		Delta          string       `json:"delta,omitempty"`
		Text           string       `json:"text,omitempty"`
		Part           *SummaryText `json:"part,omitempty"`
	}
	itemEvent struct {
		Type           string `json:"type"`
		SequenceNumber int    `json:"sequence_number"`
		OutputIndex    int    `json:"output_index"`
		Item           any    `json:"item"`
	}
)

// itemMap is an output item as the spec shapes it, by type.
func itemMap(it *OutputItem) map[string]any {
	m := map[string]any{"id": it.ID, "type": it.Type, "status": string(it.Status)}
	if it.Type == ItemReasoning {
		summary := []any{}
		for _, p := range it.Summary {
			summary = append(summary, map[string]any{"type": PartSummary, "text": p.Text})
		}
		m["summary"] = summary
		return m
	}
	if it.Type == ItemFunctionCall {
		m["call_id"], m["name"], m["arguments"] = it.CallID, it.Name, it.Arguments
		return m
	}
	content := []any{}
	for _, c := range it.Content {
		content = append(content, map[string]any{"type": PartOutputText, "text": c.Text, "annotations": []any{}})
	}
	m["role"], m["content"] = it.Role, content
	return m
}

func TestHandEncodedEventsMatchEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range strs {
		items := []OutputItem{
			{Type: ItemMessage, ID: "msg_" + s, Status: StatusCompleted, Role: RoleAssistant,
				Content: []OutputText{{Type: PartOutputText, Text: s, Annotations: []json.RawMessage{}}}},
			{Type: ItemMessage, ID: "msg_1", Status: StatusInProgress, Role: RoleAssistant},
			{Type: ItemFunctionCall, ID: "fc_1", Status: StatusCompleted, CallID: "call_" + s, Name: s, Arguments: `{"a":"` + s + `"}`},
			{Type: ItemReasoning, ID: "rs_1", Status: StatusCompleted, Summary: []SummaryText{{Type: PartSummary, Text: s}}},
			{Type: ItemReasoning, ID: "rs_2", Status: StatusInProgress, Summary: []SummaryText{}},
		}
		for i := range items {
			it := &items[i]
			got := appendItemEvent(nil, EventOutputItemDone, 7, 2, it)
			want := marshal(t, itemEvent{Type: EventOutputItemDone, SequenceNumber: 7, OutputIndex: 2, Item: itemMap(it)})
			if diff := cmp.Diff(decodeAny(t, want), decodeAny(t, got)); diff != "" {
				t.Errorf("item event %q (-want +got):\n%s", s, diff)
			}
			b, err := json.Marshal(*it)
			require.NoError(t, err)
			require.Equal(t, decodeAny(t, marshal(t, itemMap(it))), decodeAny(t, b), "OutputItem.MarshalJSON")
		}
		for _, c := range []struct {
			got  []byte
			want any
		}{
			{appendTextEvent(nil, EventOutputTextDelta, 3, appendItemRef(nil, "msg_1", 1), "delta", s+"x"),
				textEvent{Type: EventOutputTextDelta, SequenceNumber: 3, ItemID: "msg_1", OutputIndex: 1, Delta: s + "x", Logprobs: []any{}}},
			{appendTextEvent(nil, EventOutputTextDone, 4, appendItemRef(nil, s, 0), "text", s+"x"),
				textEvent{Type: EventOutputTextDone, SequenceNumber: 4, ItemID: s, Text: s + "x", Logprobs: []any{}}},
			{appendArgumentsEvent(nil, EventFunctionArgumentsDelta, 5, appendItemRef(nil, "fc_1", 2), "delta", s+"{", ""),
				argumentsEvent{Type: EventFunctionArgumentsDelta, SequenceNumber: 5, ItemID: "fc_1", OutputIndex: 2, Delta: s + "{"}},
			{appendArgumentsEvent(nil, EventFunctionArgumentsDone, 6, appendItemRef(nil, "fc_1", 2), "arguments", s+"{}", "f"+s),
				argumentsEvent{Type: EventFunctionArgumentsDone, SequenceNumber: 6, ItemID: "fc_1", OutputIndex: 2, Arguments: s + "{}", Name: "f" + s}},
			{appendSummaryEvent(nil, EventReasoningTextDelta, 9, appendItemRef(nil, "rs_1", 0), "delta", s+"x"),
				summaryEvent{Type: EventReasoningTextDelta, SequenceNumber: 9, ItemID: "rs_1", Delta: s + "x"}},
			{appendSummaryEvent(nil, EventReasoningTextDone, 9, appendItemRef(nil, "rs_1", 0), "text", s+"x"),
				summaryEvent{Type: EventReasoningTextDone, SequenceNumber: 9, ItemID: "rs_1", Text: s + "x"}},
			{appendSummaryEvent(nil, EventReasoningPartAdded, 9, appendItemRef(nil, "rs_1", 3), "part", s),
				summaryEvent{Type: EventReasoningPartAdded, SequenceNumber: 9, ItemID: "rs_1", OutputIndex: 3, Part: &SummaryText{Type: PartSummary, Text: s}}},
			{appendPartEvent(nil, EventContentPartDone, 8, appendItemRef(nil, "msg_1", 0), s),
				partEvent{Type: EventContentPartDone, SequenceNumber: 8, ItemID: "msg_1", Part: OutputText{Type: PartOutputText, Text: s, Annotations: []json.RawMessage{}}}},
		} {
			if diff := cmp.Diff(decodeAny(t, marshal(t, c.want)), decodeAny(t, c.got)); diff != "" {
				t.Errorf("%q (-want +got):\n%s", s, diff)
			}
		}
	}
}

func FuzzAppendTextEvent(f *testing.F) {
	for _, s := range strs {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendTextEvent(nil, EventOutputTextDelta, 1, appendItemRef(nil, "msg_1", 0), "delta", s)
		var ev textEvent
		require.NoError(t, json.Unmarshal(got, &ev), "%s", got)
		var want string
		require.NoError(t, json.Unmarshal(marshal(t, s), &want))
		require.Equal(t, want, ev.Delta)
	})
}
