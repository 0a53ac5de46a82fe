package messages

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gatewaykit/gatewaykit/sse"
)

// StreamEvent is one event of a recorded stream: its SSE name and its
// data, decoded.
type StreamEvent struct {
	Name string
	Data Event
	Raw  string
}

// ParseStream reads the events of a recorded messages-format stream; it
// fails on an event without an event: line, or whose data is not an
// Event of the same type.
func ParseStream(body string) ([]StreamEvent, error) {
	var out []StreamEvent
	for ev, err := range sse.Read(strings.NewReader(body)) {
		if err != nil {
			return nil, err
		}
		if ev.Data == "" {
			continue
		}
		if ev.Type == "" {
			return nil, fmt.Errorf("event without an event: line: %s", ev.Data)
		}
		var e Event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return nil, fmt.Errorf("event %s: %w", ev.Type, err)
		}
		if e.Type != ev.Type {
			return nil, fmt.Errorf("event %s carries type %q", ev.Type, e.Type)
		}
		out = append(out, StreamEvent{Name: ev.Type, Data: e, Raw: ev.Data})
	}
	return out, nil
}

// CheckEvents checks that events follow the format's sequence:
// message_start (with content [] and usage) first; blocks started,
// delta'd and stopped one at a time with indexes 0, 1, 2… in order, each
// delta of its block's kind; one ping, after the first block start (or
// before message_delta when there is none); message_delta with a stop
// reason and usage; message_stop last. A stream may instead end with one
// error event (after any prefix of that sequence).
func CheckEvents(events []StreamEvent) error {
	if len(events) == 0 {
		return fmt.Errorf("no events")
	}
	if last := events[len(events)-1]; last.Name == EventError {
		if last.Data.Error == nil || last.Data.Error.Type == "" || last.Data.Error.Message == "" {
			return fmt.Errorf("error event without type and message: %s", last.Raw)
		}
		events = events[:len(events)-1]
		if len(events) == 0 {
			return nil
		}
		return checkSequence(events, false)
	}
	return checkSequence(events, true)
}

func checkSequence(events []StreamEvent, complete bool) error {
	if events[0].Name != EventMessageStart {
		return fmt.Errorf("first event %s, want message_start", events[0].Name)
	}
	m := events[0].Data.Message
	if m == nil || m.Content == nil || len(m.Content) != 0 || m.Type != "message" || m.Role != RoleAssistant || !strings.HasPrefix(m.ID, IDPrefix) {
		return fmt.Errorf("bad message_start: %s", events[0].Raw)
	}
	if !strings.Contains(events[0].Raw, `"usage":{`) || !strings.Contains(events[0].Raw, `"content":[]`) {
		return fmt.Errorf("message_start without content [] or usage: %s", events[0].Raw)
	}
	next, open, pinged, ended := 0, "", false, false
	for i, ev := range events[1:] {
		d := ev.Data
		if ended {
			return fmt.Errorf("event %d (%s) after message_stop", i+1, ev.Name)
		}
		switch ev.Name {
		case EventPing:
			if pinged {
				return fmt.Errorf("second ping")
			}
			pinged = true
		case EventContentBlockStart:
			if open != "" {
				return fmt.Errorf("block %d starts while block %d is open", next, next)
			}
			if d.Index == nil || *d.Index != next || d.ContentBlock == nil {
				return fmt.Errorf("content_block_start with index %v, want %d: %s", d.Index, next, ev.Raw)
			}
			switch d.ContentBlock.Type {
			case BlockText, BlockThinking, BlockToolUse:
			default:
				return fmt.Errorf("block of type %q", d.ContentBlock.Type)
			}
			if d.ContentBlock.Type == BlockToolUse && (d.ContentBlock.ID == "" || d.ContentBlock.Name == "") {
				return fmt.Errorf("tool_use block without id or name: %s", ev.Raw)
			}
			open = d.ContentBlock.Type
			if next == 0 && !pinged {
				// The ping must come right after the first start.
				if i+2 >= len(events) || events[i+2].Name != EventPing {
					return fmt.Errorf("no ping after the first content_block_start")
				}
			}
		case EventContentBlockDelta:
			if open == "" || d.Index == nil || *d.Index != next || d.Delta == nil {
				return fmt.Errorf("content_block_delta outside its block: %s", ev.Raw)
			}
			want := map[string]string{BlockText: DeltaText, BlockThinking: DeltaThinking, BlockToolUse: DeltaInputJSON}[open]
			if d.Delta.Type != want && !(open == BlockThinking && d.Delta.Type == DeltaSignature) {
				return fmt.Errorf("%s in a %s block", d.Delta.Type, open)
			}
		case EventContentBlockStop:
			if open == "" || d.Index == nil || *d.Index != next {
				return fmt.Errorf("content_block_stop of a block not open: %s", ev.Raw)
			}
			open = ""
			next++
		case EventMessageDelta:
			if open != "" {
				return fmt.Errorf("message_delta while block %d is open", next)
			}
			if d.Delta == nil || d.Delta.StopReason == "" || d.Usage == nil {
				return fmt.Errorf("message_delta without stop_reason or usage: %s", ev.Raw)
			}
			if !pinged {
				return fmt.Errorf("message_delta before any ping")
			}
		case EventMessageStop:
			if i == 0 || events[i].Name != EventMessageDelta {
				return fmt.Errorf("message_stop not after message_delta")
			}
			ended = true
		default:
			return fmt.Errorf("unknown event %s", ev.Name)
		}
	}
	if complete && !ended {
		return fmt.Errorf("stream without message_stop")
	}
	return nil
}
