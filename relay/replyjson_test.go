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
		if decodeChatReply([]byte(data), &fast) {
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
		if !decodeChatReply([]byte(s), &r) {
			t.Errorf("seed %d: the hand decoder refused the usual shape %s", i, s)
		}
	}
	var r chatReply
	if decodeChatReply([]byte(replySeeds[3]), &r) {
		t.Error("the hand decoder took tool calls, which it leaves to encoding/json")
	}
}
