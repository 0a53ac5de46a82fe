package messages

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/jsonenc/jsonenctest"
)

// BenchmarkEncodeDelta compares the hand encoder of a text
// content_block_delta, the event of every token of a Messages stream,
// with encoding/json and json v2 encoding the same Event (the benchmark
// fails if the bytes differ). BENCHMARKS.md has the figures.
func BenchmarkEncodeDelta(b *testing.B) {
	index := 0
	v := Event{Type: EventContentBlockDelta, Index: &index, Delta: &EventDelta{Type: "text_delta", Text: "hello "}}
	jsonenctest.Compare(b, v, func(buf []byte) []byte {
		return appendDelta(buf, 0, "text_delta", "text", "hello ")
	})
}
