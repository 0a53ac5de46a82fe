// Package jsonenctest holds the benchmark that sets a hand JSON encoder
// beside encoding/json encoding the same document; BENCHMARKS.md has the
// figures. json v2 (github.com/go-json-experiment/json) encoding the same
// wire values is measured in module bench (bench/codecs), which keeps it
// out of the kit's go.mod; both hold the bytes to the same document of
// internal/codecdocs.
package jsonenctest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Compare runs hand, the hand encoder of a document, beside
// encoding/json encoding v, the wire value that gives the same bytes,
// each into a buffer reused from one run to the next, as the stream
// writers do. It fails unless both write want.
func Compare(b *testing.B, want string, v any, hand func(buf []byte) []byte) {
	b.Helper()
	var lib bytes.Buffer
	enc := json.NewEncoder(&lib)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Fatal(err)
	}
	if got := bytes.TrimSuffix(lib.Bytes(), []byte("\n")); string(got) != want {
		b.Fatalf("encoding/json writes\n%s\nwant\n%s", got, want)
	}
	if got := hand(nil); string(got) != want {
		b.Fatalf("the hand encoder writes\n%s\nwant\n%s", got, want)
	}
	b.Run("Hand", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = hand(buf[:0])
		}
	})
	b.Run("EncodingJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			if err := enc.Encode(v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
