package relay

import "testing"

var replySeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello there.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0}},"system_fingerprint":"fp"}`,
	`{"choices":[{"index":1,"message":{"content":null,"reasoning_content":"think","reasoning":"more"},"finish_reason":"length"},{"index":0,"message":{"content":"é \"q\"\n\u00e9"}}],"usage":null}`,
	`{"choices":[{"index":0,"message":{"content":"x","tool_calls":null}}],"usage":{"completion_tokens_details":null}}`,
	`{"choices":[{"index":0,"message":{"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"Index":0,"message":{"Content":"x"}}]}`,
	`{"choices":[],"choices":[{"index":1}]}`,
	`{"choices":null,"usage":{"prompt_tokens":1.5}}`,
	`{"choices":[{"index":0,"message":{"content":"\ud800"}}]} `,
	`{"choices":[{"index":0,"message":{"content":"a"}},]}`,
	`[1]`,
	`{"usage":{"prompt_tokens":1,"prompt_tokens":2}}`,
}

// FuzzDecodeChatReply checks the hand decoder against encoding/json:
// whenever it decodes a reply, encoding/json decodes the same reply to
// the same value.
func FuzzDecodeChatReply(f *testing.F) {
	for _, s := range replySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var fast chatReply
		if decodeChatReply([]byte(data), &fast, new([]span)) {
			agreesWithJSON(t, data, &fast, func(r *chatReply) {
				if len(r.Choices) == 0 {
					r.Choices = nil
				}
			})
		}
	})
}

func TestDecodeChatReplyTakesTheUsualShape(t *testing.T) {
	t.Parallel()
	for i, s := range replySeeds[:3] {
		var r chatReply
		if !decodeChatReply([]byte(s), &r, new([]span)) {
			t.Errorf("seed %d: the hand decoder refused the usual shape %s", i, s)
		}
	}
	var r chatReply
	if decodeChatReply([]byte(replySeeds[3]), &r, new([]span)) {
		t.Error("the hand decoder took tool calls, which it leaves to encoding/json")
	}
}

var responsesEventSeeds = []string{
	`{"type":"response.output_text.delta","sequence_number":5,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" fox","logprobs":[],"obfuscation":"x"}`,
	`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`,
	`{"type":"response.output_item.done","output_index":1,"item":{"type":"message","content":[{"type":"output_text","text":"hi"}]}}`,
	`{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"a\":"}`,
	`{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":" the","obfuscation":"x"}`,
	`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"c","name":"f","arguments":""}}`,
	`{"type":"response.completed","response":{"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}}`,
	`{"type":"response.output_item.added","output_index":0,"item":null}`,
	`{"Type":"response.output_text.delta","delta":"x"}`,
	`{"type":"response.output_text.delta","delta":"a","delta":"b"}`,
	`{"response":{"x":1},"type":"response.failed"}`,
	`{"type":"error","code":"x","message":"m"}`,
}

// responsesEventHead is what the relay reads of an event whose item and
// response it does not read.
type responsesEventHead struct {
	Type         string `json:"type"`
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
	Delta        string `json:"delta"`
}

// FuzzDecodeResponsesEvent checks the hand decoder of responses stream
// events against encoding/json, for what the relay reads: the type, the
// output index and the delta of every event, and also the item and the
// response of the events that need them (of the others, they are only
// checked to be JSON: encoding/json would refuse, say, a response that is
// a string, where the relay skips it).
func FuzzDecodeResponsesEvent(f *testing.F) {
	for _, s := range responsesEventSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var fast responsesEvent
		if !decodeResponsesEvent([]byte(data), &fast) {
			return
		}
		if needsBody(fast.Type) {
			agreesWithJSON(t, data, &fast, func(*responsesEvent) {})
			return
		}
		if fast.Item != nil || fast.Response != nil {
			t.Fatalf("the hand decoder read the item or response of %q", data)
		}
		head := responsesEventHead{fast.Type, fast.OutputIndex, fast.SummaryIndex, fast.Delta}
		agreesWithJSON(t, data, &head, func(*responsesEventHead) {})
	})
}

func TestDecodeResponsesEventTakesTheUsualEvents(t *testing.T) {
	t.Parallel()
	for i, s := range responsesEventSeeds[:5] {
		var e responsesEvent
		if !decodeResponsesEvent([]byte(s), &e) {
			t.Errorf("seed %d: the hand decoder refused %s", i, s)
		}
	}
	for _, s := range responsesEventSeeds[5:7] {
		var e responsesEvent
		if decodeResponsesEvent([]byte(s), &e) {
			t.Errorf("the hand decoder took %s, whose body the relay reads", s)
		}
	}
}

var completionsSeeds = []string{
	`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":" fox","index":0,"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"choices":[{"text":"","index":1,"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"error":{"message":"x"}}`,
	`{"choices":[{"Text":"x"}]}`,
	`{"choices":[{"index":0,"text":"a","text":"b"}]}`,
}

// FuzzDecodeCompletionsReply checks the hand decoder of completions and
// their chunks against encoding/json.
func FuzzDecodeCompletionsReply(f *testing.F) {
	for _, s := range completionsSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var fast completionsReply
		if decodeCompletionsReply([]byte(data), &fast, new([]span)) {
			agreesWithJSON(t, data, &fast, func(r *completionsReply) {
				if len(r.Choices) == 0 {
					r.Choices = nil
				}
			})
		}
	})
}

func TestDecodeCompletionsReplyTakesTheUsualShape(t *testing.T) {
	t.Parallel()
	for i, s := range completionsSeeds {
		var r completionsReply
		if got, want := decodeCompletionsReply([]byte(s), &r, new([]span)), i < 3; got != want {
			t.Errorf("seed %d: the hand decoder took it: %v, want %v: %s", i, got, want, s)
		}
	}
}
