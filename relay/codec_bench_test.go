package relay

import (
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// The codec benchmarks compare each of the relay's hand decoders with
// encoding/json and with json v2 (github.com/go-json-experiment/json)
// decoding the same document into the same type: the relay's hottest
// documents, as the load test's mock upstream and OpenAI send them. The
// hand decoders also keep the spans of the members that a pass-through
// writes on; the libraries do not (that would take a second pass).
// BENCHMARKS.md has the figures.
var codecDocs = struct {
	chunk, reply, completions, responsesDelta, gemini []byte
}{
	chunk:          []byte(`{"id":"chatcmpl-mock0001","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{"content":"hello "},"logprobs":null,"finish_reason":null}]}`),
	reply:          []byte(`{"id":"chatcmpl-mock0001","object":"chat.completion","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a canned reply from the mock upstream. It is about as long as a short real answer.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":24,"total_tokens":43,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`),
	completions:    []byte(`{"id":"cmpl-mock0001","object":"text_completion","created":1730000000,"model":"gpt-4o-mini","choices":[{"text":"Hello! This is a canned completion from the mock upstream.","index":0,"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":12,"total_tokens":17}}`),
	responsesDelta: []byte(`{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_0001","output_index":0,"content_index":0,"delta":"hello ","logprobs":[]}`),
	gemini:         []byte(`{"candidates":[{"content":{"parts":[{"text":"hello "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":19,"candidatesTokenCount":3,"totalTokenCount":22},"modelVersion":"gemini-2.5-flash","responseId":"abc123"}`),
}

// benchCodec runs the three decoders of one document side by side.
func benchCodec[T any](b *testing.B, doc []byte, hand func(data []byte, v *T) bool) {
	b.Helper()
	var v T
	if !hand(doc, &v) {
		b.Fatal("the hand decoder does not take the document")
	}
	for _, c := range []struct {
		name   string
		decode func(data []byte, v *T) error
	}{
		{"Hand", func(data []byte, v *T) error {
			if !hand(data, v) {
				b.Fatal("not handled")
			}
			return nil
		}},
		{"EncodingJSON", func(data []byte, v *T) error { return json.Unmarshal(data, v) }},
		{"JSONv2", func(data []byte, v *T) error { return jsonv2.Unmarshal(data, v) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				var v T
				if err := c.decode(doc, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCodecChatChunk(b *testing.B) {
	var kept []span
	benchCodec(b, codecDocs.chunk, func(data []byte, c *chatChunk) bool {
		kept = kept[:0]
		return decodeChatChunk(data, c, &kept)
	})
}

func BenchmarkCodecChatReply(b *testing.B) {
	var kept []span
	benchCodec(b, codecDocs.reply, func(data []byte, r *chatReply) bool {
		kept = kept[:0]
		return decodeChatReply(data, r, &kept)
	})
}

func BenchmarkCodecCompletionsReply(b *testing.B) {
	var kept []span
	benchCodec(b, codecDocs.completions, func(data []byte, r *completionsReply) bool {
		kept = kept[:0]
		return decodeCompletionsReply(data, r, &kept)
	})
}

func BenchmarkCodecResponsesEvent(b *testing.B) {
	benchCodec(b, codecDocs.responsesDelta, decodeResponsesEvent)
}

func BenchmarkCodecGeminiEvent(b *testing.B) {
	benchCodec(b, codecDocs.gemini, decodeGeminiEvent)
}

// BenchmarkCodecRequestBody compares the relay's reading of a client's
// request (the members, to send on with the upstream's model name) with
// decoding it into a map of raw members and encoding it again.
func BenchmarkCodecRequestBody(b *testing.B) {
	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"stream":false}`)
	b.Run("Hand", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			rb, err := parseRequestBody(body, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := rb.encode("upstream-model"); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, lib := range []struct {
		name      string
		unmarshal func([]byte, any) error
		marshal   func(any) ([]byte, error)
	}{
		{"EncodingJSON", json.Unmarshal, json.Marshal},
		{"JSONv2", func(d []byte, v any) error { return jsonv2.Unmarshal(d, v) }, func(v any) ([]byte, error) { return jsonv2.Marshal(v) }},
	} {
		b.Run(lib.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var m map[string]json.RawMessage
				if err := lib.unmarshal(body, &m); err != nil {
					b.Fatal(err)
				}
				m["model"] = json.RawMessage(`"upstream-model"`)
				if _, err := lib.marshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
