package chat

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc/jsonenctest"
)

// The encoder benchmarks compare the hand encoders of the chat replies
// with encoding/json encoding the exported wire type that gives the same bytes
// (TestAppendChunkMatchesTheWireType and
// TestAppendCompletionMatchesTheWireType hold them to it), each into a
// buffer reused from one event to the next, as the stream writer does;
// json v2 (github.com/go-json-experiment/json) encoding the same values
// is measured in module bench (bench/codecs), out of the kit's go.mod.
// BENCHMARKS.md has the figures.

func BenchmarkEncodeChunk(b *testing.B) {
	// A content delta of a stream, as the demo backend and a relayed
	// upstream send thousands of them: the prefix is encoded once per
	// stream (pipeline.ChunkBuffer), the choice once per event.
	prefix := appendChunkPrefix(nil, "chatcmpl-0123456789abcdefghij", 1730000000, "gpt-4o-mini")
	v := Chunk{ID: "chatcmpl-0123456789abcdefghij", Object: ObjectChunk, Created: 1730000000, Model: "gpt-4o-mini",
		Choices: []ChunkChoice{{Index: 0, Delta: ChunkDelta{Content: "hello "}}}}
	jsonenctest.Compare(b, codecdocs.EncChatChunk, v, func(buf []byte) []byte {
		return appendChunkChoice(append(buf, prefix...), 0, false, "hello ", "", nil, "")
	})
}

func BenchmarkEncodeCompletion(b *testing.B) {
	content := "Hello! This is a canned reply from the mock upstream. It is about as long as a short real answer."
	outs := []Output{{Content: content, FinishReason: FinishStop}}
	u := Usage{PromptTokens: 19, CompletionTokens: 24, TotalTokens: 43}
	v := Completion{ID: "chatcmpl-0123456789abcdefghij", Object: ObjectCompletion, Created: 1730000000, Model: "gpt-4o-mini",
		Choices: []Choice{{Index: 0, Message: ChoiceMessage{Role: "assistant", Content: &content}, FinishReason: FinishStop}}, Usage: u}
	jsonenctest.Compare(b, codecdocs.EncChatCompletion, v, func(buf []byte) []byte {
		return appendCompletion(buf, "chatcmpl-0123456789abcdefghij", 1730000000, "gpt-4o-mini", outs, &u)
	})
}
