package messages

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc/jsonenctest"
)

// BenchmarkEncodeDelta compares the hand encoder of a text
// content_block_delta, the event of every token of a Messages stream,
// with encoding/json encoding the same Event (the benchmark fails if the
// bytes differ; json v2's side is in bench/codecs). BENCHMARKS.md has
// the figures.
func BenchmarkEncodeDelta(b *testing.B) {
	index := 0
	v := Event{Type: EventContentBlockDelta, Index: &index, Delta: &EventDelta{Type: "text_delta", Text: "hello "}}
	jsonenctest.Compare(b, codecdocs.EncMessagesDelta, v, func(buf []byte) []byte {
		return appendDelta(buf, 0, "text_delta", "text", "hello ")
	})
}
