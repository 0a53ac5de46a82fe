package relay

import (
	"encoding/json"
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
)

// The codec benchmarks compare each of the relay's hand decoders with
// encoding/json decoding the same document into the same type: the
// relay's hottest documents (internal/codecdocs), as the load test's mock
// upstream and OpenAI send them. json v2 (github.com/go-json-experiment/json)
// decoding the same documents into copies of the same types is measured
// in module bench (bench/codecs), which keeps it out of the kit's go.mod.
// The hand decoders also keep the spans of the members that a
// pass-through writes on; the libraries do not (that would take a second
// pass). BENCHMARKS.md has the figures.
var codecDocs = struct {
	chunk, reply, completions, responsesDelta, gemini []byte
}{
	chunk:          []byte(codecdocs.ChatChunk),
	reply:          []byte(codecdocs.ChatReply),
	completions:    []byte(codecdocs.CompletionsReply),
	responsesDelta: []byte(codecdocs.ResponsesDelta),
	gemini:         []byte(codecdocs.GeminiEvent),
}

// benchCodec runs the two decoders of one document side by side.
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
	body := []byte(codecdocs.RelayRequest)
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
	b.Run("EncodingJSON", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(body, &m); err != nil {
				b.Fatal(err)
			}
			m["model"] = json.RawMessage(`"upstream-model"`)
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
