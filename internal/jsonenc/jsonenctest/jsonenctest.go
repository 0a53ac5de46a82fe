// Package jsonenctest holds the benchmark that sets a hand JSON encoder
// beside encoding/json and json v2 (github.com/go-json-experiment/json)
// encoding the same document; BENCHMARKS.md has the figures.
package jsonenctest

import (
	"bytes"
	"encoding/json"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Compare runs hand, the hand encoder of a document, beside
// encoding/json and json v2 encoding v, the wire value that gives the
// same bytes (it fails if they differ), each into a buffer reused from
// one run to the next, as the stream writers do. json v2 escapes U+2028
// and U+2029 as the others do (EscapeForJS).
func Compare(b *testing.B, v any, hand func(buf []byte) []byte) {
	b.Helper()
	var lib bytes.Buffer
	enc := json.NewEncoder(&lib)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Fatal(err)
	}
	if got := hand(nil); !bytes.Equal(got, bytes.TrimSuffix(lib.Bytes(), []byte("\n"))) {
		b.Fatalf("the hand encoder writes\n%s\nencoding/json\n%s", got, lib.Bytes())
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
	b.Run("JSONv2", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		opts := jsonv2.JoinOptions(jsonv2.Deterministic(true), jsontext.EscapeForJS(true))
		for b.Loop() {
			buf.Reset()
			if err := jsonv2.MarshalWrite(&buf, v, opts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
