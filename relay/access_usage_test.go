package relay

import (
	"testing"
)

func TestUsageScanner(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want int64
	}{
		{"OpenAIEmbeddings", `{"object":"list","data":[{"embedding":[0.1,0.2]}],"model":"m","usage":{"prompt_tokens":8,"total_tokens":8}}`, 8},
		{"UsageFirst", `{"usage": {"total_tokens": 12} , "data":[]}`, 12},
		{"MessagesReply", `{"id":"msg_1","type":"message","content":[{"type":"text","text":"\"usage\":{\"total_tokens\":999}"}],"usage":{"input_tokens":25,"output_tokens":15,"cache_read_input_tokens":5}}`, 45},
		{"GeminiArray", "[{\"candidates\":[],\"usageMetadata\":{\"totalTokenCount\":3}},\n{\"candidates\":[],\"usageMetadata\":{\"promptTokenCount\":2,\"totalTokenCount\":7}}]", 7},
		{"PromptAndCompletion", `{"usage":{"prompt_tokens":3,"completion_tokens":4}}`, 7},
		{"NestedIgnored", `{"data":{"usage":{"total_tokens":99}},"x":[{"usage":{"total_tokens":98}}]}`, 0},
		{"NullUsage", `{"usage":null}`, 0},
		{"NoUsage", `{"object":"list","data":[]}`, 0},
		{"KeyAsValue", `{"model":"usage","n":{"usage":1}}`, 0},
		{"Malformed", `{"usage":{"total_tokens":`, 0},
		{"NotJSON", "\x00\xff usage : {", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Every split into two writes finds the same.
			for i := 0; i <= len(tc.text); i++ {
				var s usageScanner
				_, _ = s.Write([]byte(tc.text[:i]))
				_, _ = s.WriteString(tc.text[i:])
				if got := s.usage.tokens(); got != tc.want {
					t.Fatalf("split at %d: tokens %d, want %d", i, got, tc.want)
				}
			}
		})
	}
}

func TestUsageScannerEvents(t *testing.T) {
	t.Parallel()
	var s usageScanner
	s.scanEvent("message_start", `{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":25,"output_tokens":1}}}`)
	s.scanEvent("content_block_delta", `{"type":"content_block_delta","delta":{"type":"text_delta","text":"hi"}}`)
	s.scanEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":15}}`)
	if got := s.usage.tokens(); got != 40 {
		t.Fatalf("messages stream: tokens %d, want 25 in + 15 out", got)
	}
	var g usageScanner
	g.scanEvent("", `{"candidates":[],"usageMetadata":{"totalTokenCount":3}}`)
	g.scanEvent("", `{"candidates":[],"usageMetadata":{"totalTokenCount":9}}`)
	if got := g.usage.tokens(); got != 9 {
		t.Fatalf("Gemini stream: tokens %d, want the last total, 9", got)
	}
}

// FuzzUsageScanner checks that the scanner never panics and finds the
// same however the text is cut into writes.
func FuzzUsageScanner(f *testing.F) {
	f.Add([]byte(`{"usage":{"total_tokens":8}}`), uint(3))
	f.Add([]byte(`[{"usageMetadata":{"totalTokenCount":7}}]`), uint(10))
	f.Add([]byte(`{"a":"\"usage\":{","usage":{"input_tokens":1,"output_tokens":2}}`), uint(0))
	f.Fuzz(func(t *testing.T, text []byte, cut uint) {
		var whole, split usageScanner
		_, _ = whole.Write(text)
		i := int(cut % uint(len(text)+1))
		_, _ = split.Write(text[:i])
		_, _ = split.Write(text[i:])
		if whole.usage.tokens() != split.usage.tokens() {
			t.Fatalf("whole %d, split at %d %d", whole.usage.tokens(), i, split.usage.tokens())
		}
	})
}

// TestUsageScannerParts: the parts that providers price apart, in each
// format's usage: the cache's reads and writes and the reasoning tokens
// (issue 26).
func TestUsageScannerParts(t *testing.T) {
	t.Parallel()
	type parts struct{ cached, write, reasoning int64 }
	for _, tc := range []struct {
		name string
		text string
		want parts
	}{
		{"OpenAIChat", `{"usage":{"prompt_tokens":50,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":30,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":12}}}`, parts{30, 0, 12}},
		{"OpenAIResponses", `{"usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":30},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":12}}}`, parts{30, 0, 12}},
		{"Messages", `{"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":9}}`, parts{50, 20, 0}},
		{"Gemini", `{"usageMetadata":{"promptTokenCount":80,"cachedContentTokenCount":50,"candidatesTokenCount":6,"thoughtsTokenCount":3}}`, parts{50, 0, 3}},
		{"NullDetails", `{"usage":{"prompt_tokens":5,"prompt_tokens_details":null}}`, parts{}},
		{"None", `{"usage":{"prompt_tokens":5,"completion_tokens":1}}`, parts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var s usageScanner
			_, _ = s.WriteString(tc.text)
			c, w, r := s.usage.parts()
			if got := (parts{c, w, r}); got != tc.want {
				t.Fatalf("parts %+v, want %+v", got, tc.want)
			}
		})
	}
}
