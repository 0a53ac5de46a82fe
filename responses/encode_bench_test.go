package responses

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc/jsonenctest"
)

// BenchmarkEncodeTextDelta compares the hand encoder of
// response.output_text.delta, the event of every token of a stream (the
// item's reference encoded once per item), with encoding/json encoding
// the same event (the benchmark fails if the bytes differ; json v2's side
// is in bench/codecs). BENCHMARKS.md has the figures.
func BenchmarkEncodeTextDelta(b *testing.B) {
	ref := appendItemRef(nil, "msg_0123456789abcdefghij", 0)
	v := textEvent{Type: EventOutputTextDelta, SequenceNumber: 7, ItemID: "msg_0123456789abcdefghij", Delta: "hello ", Logprobs: []any{}}
	jsonenctest.Compare(b, codecdocs.EncResponsesTextDelta, v, func(buf []byte) []byte {
		return appendTextEvent(buf, EventOutputTextDelta, 7, ref, "delta", "hello ")
	})
}
