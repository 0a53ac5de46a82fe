package relay

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"choices":[{"index":1,"delta":{"content":" fox"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"content":"line\nbreak \"q\" \u00e9 é"},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"more"},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	`{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"bench","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":62,"total_tokens":82}}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
	`{"choices":[],"usage":{"prompt_tokens":1},"usage":null}`,
	`{"choices":[],"usage":{"Prompt_Tokens":1,"total_tokens":"x"}}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":""}}]}}]}`,
	`{"choices":[{"Index":2,"delta":{"Content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"},"index":3}]}`,
	`{"choices":[],"choices":[{"index":1}]}`,
	`{"choices":null}`,
	`{"choices":[{"index":1.5}]}`,
	`{"choices":[{"index":12345678901}]}`,
	`{"error":{"message":"x"}}`,
	`[1,2]`,
	`{"choices":[{"index":0,"delta":{"content":"\ud800"}}]}`,
	`{"choices":[{"index":-1,"delta":null}]}`,
	`{"x":{"choices":[1]},"choices":[{"finish_reason":"stop","delta":{"content":null}}]}`,
}

// agreesWithJSON fails t unless the value that a hand decoder made of
// data, fast, is the one encoding/json makes of it; empty makes the
// values' empty slices nil (encoding/json makes [] an empty slice, the
// hand decoders leave it nil).
func agreesWithJSON[T any](t *testing.T, data string, fast *T, empty func(*T)) {
	t.Helper()
	var slow T
	if err := json.Unmarshal([]byte(data), &slow); err != nil {
		t.Fatalf("the hand decoder accepted %q, which encoding/json refuses: %v", data, err)
	}
	empty(fast)
	empty(&slow)
	if diff := cmp.Diff(slow, *fast); diff != "" {
		t.Fatalf("decoding %q (-encoding/json +hand):\n%s", data, diff)
	}
}

// FuzzDecodeChatChunk checks the hand decoder against encoding/json:
// whenever it decodes a chunk, encoding/json decodes the same chunk to
// the same value.
func FuzzDecodeChatChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var fast chatChunk
		var kept []span
		if decodeChatChunk([]byte(data), &fast, &kept) {
			agreesWithJSON(t, data, &fast, func(c *chatChunk) {
				if len(c.Choices) == 0 {
					c.Choices = nil
				}
			})
		}
	})
}

func TestDecodeChatChunkTakesTheUsualShape(t *testing.T) {
	t.Parallel()
	for i, s := range chunkSeeds[:7] {
		var c chatChunk
		var kept []span
		if !decodeChatChunk([]byte(s), &c, &kept) {
			t.Errorf("seed %d: the hand decoder refused the usual shape %s", i, s)
		}
	}
}
