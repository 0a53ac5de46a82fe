package responsestest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/suite"
)

// stream builds the events of a stream from "type {members}" lines,
// numbering them; "[DONE]" ends it.
func stream(lines ...string) []suite.Event {
	var evs []suite.Event
	for i, l := range lines {
		if l == "[DONE]" {
			evs = append(evs, suite.Event{Data: l})
			continue
		}
		typ, members, _ := strings.Cut(l, " ")
		data := fmt.Sprintf(`{"type":%q,"sequence_number":%d%s}`, typ, i, members)
		evs = append(evs, suite.Event{Name: typ, Data: data})
	}
	return evs
}

const (
	created    = `response.created ,"response":{"id":"resp_1","status":"in_progress","output":[]}`
	inProgress = `response.in_progress ,"response":{"id":"resp_1","status":"in_progress","output":[]}`
	added0     = `response.output_item.added ,"output_index":0,"item":{"type":"message","id":"msg_1","status":"in_progress","role":"assistant","content":[]}`
	delta0     = `response.output_text.delta ,"output_index":0,"delta":"Hi"`
	textDone0  = `response.output_text.done ,"output_index":0,"text":"Hi"`
	done0      = `response.output_item.done ,"output_index":0,"item":{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]}`
	completed  = `response.completed ,"response":{"id":"resp_1","status":"completed","output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]}],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`
	added1     = `response.output_item.added ,"output_index":1,"item":{"type":"function_call","id":"fc_1","status":"in_progress","call_id":"call_1","name":"f"}`
)

func TestCheckStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		events  []suite.Event
		wantErr string
	}{
		{"a good stream", stream(created, inProgress, added0, delta0, textDone0, done0, completed, "[DONE]"), ""},
		{"no [DONE]", stream(created, inProgress, added0, delta0, textDone0, done0, completed), "does not end with data: [DONE]"},
		{"no in_progress", stream(created, added0, delta0, textDone0, done0, completed, "[DONE]"), "a stream begins with"},
		{"a text done that differs from its deltas", stream(created, inProgress, added0, delta0, strings.Replace(textDone0, `"Hi"`, `"Ho"`, 1), done0, completed, "[DONE]"), `has text "Ho"`},
		{"an item added while one is open", stream(created, inProgress, added0, added1, completed, "[DONE]"), "while item 0 is open"},
		{"an item left open", stream(created, inProgress, added0, delta0, completed, "[DONE]"), "item 0 open"},
		{"a failed stream", stream(created, inProgress, `response.failed ,"response":{"id":"resp_1","status":"failed","output":[]}`, "[DONE]"), "the stream failed"},
		{"no terminal event", stream(created, inProgress, added0, delta0, textDone0, done0, "[DONE]"), "ends without"},
		{"the final response lacks the item", stream(created, inProgress, added0, delta0, textDone0, done0,
			`response.completed ,"response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":1,"output_tokens":1,"total_tokens":2}}`, "[DONE]"), "0 output items, the stream added 1"},
		{"a wrong total", stream(created, inProgress, added0, delta0, textDone0, done0, strings.Replace(completed, `"total_tokens":2`, `"total_tokens":3`, 1), "[DONE]"), "total_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkStream(tc.events)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}

	t.Run("an event named apart from its type", func(t *testing.T) {
		t.Parallel()
		evs := stream(created, inProgress, added0, delta0, textDone0, done0, completed, "[DONE]")
		evs[3].Name = "response.text.delta"
		require.ErrorContains(t, checkStream(evs), `named "response.text.delta"`)
	})
	t.Run("a gap in the sequence numbers", func(t *testing.T) {
		t.Parallel()
		evs := stream(created, inProgress, added0, delta0, textDone0, done0, completed, "[DONE]")
		evs = append(evs[:3], evs[4:]...)
		require.ErrorContains(t, checkStream(evs), "has sequence_number 4, want 3")
	})
}
