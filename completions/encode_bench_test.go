package completions

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc/jsonenctest"
)

// BenchmarkEncodeChunk compares the hand encoder of a text chunk, the
// event of every token of a stream (its prefix encoded once per stream),
// with encoding/json encoding the same Chunk (the benchmark fails if the
// bytes differ; json v2's side is in bench/codecs). BENCHMARKS.md has the figures.
func BenchmarkEncodeChunk(b *testing.B) {
	prefix := appendChunkPrefix(nil, "cmpl-0123456789abcdefghij", 1730000000)
	v := Chunk{ID: "cmpl-0123456789abcdefghij", Object: ObjectCompletion, Created: 1730000000,
		Choices: []ChunkChoice{{Index: 0, Text: "hello "}}}
	jsonenctest.Compare(b, codecdocs.EncCompletionsChunk, v, func(buf []byte) []byte {
		return appendChunkChoice(append(buf, prefix...), 0, "hello ", "")
	})
}
