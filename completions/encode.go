package completions

import (
	"strconv"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

// The replies are encoded by hand, by appending to a byte slice, as in
// package chat: they are the hot path of the handler, and their shapes
// are fixed. Tests check that the bytes decode to the same values as the
// exported wire types ([Completion], [Chunk]) encode to.

// appendCompletionHead appends the members that start the non-streaming
// reply: id, object, created and model.
func appendCompletionHead(b []byte, id string, created int64, model string) []byte {
	b = appendChunkHead(b, id, created)
	b = append(b, `,"model":`...)
	return jsonenc.AppendString(b, model)
}

// appendRawCompletion appends the non-streaming reply of a Result with
// Raw: the head, Raw's members and the usage.
func appendRawCompletion(b []byte, id string, created int64, model string, raw []byte, u *endpoint.Usage) []byte {
	b = jsonenc.AppendMembers(appendCompletionHead(b, id, created, model), raw)
	b = append(b, `,"usage":`...)
	b = chunks.AppendUsage(b, u)
	return append(b, '}')
}

// appendCompletion appends the non-streaming reply.
func appendCompletion(b []byte, id string, created int64, model string, outs []Output, u *endpoint.Usage) []byte {
	b = appendCompletionHead(b, id, created, model)
	b = append(b, `,"choices":[`...)
	for i := range outs {
		o := &outs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"text":`...)
		b = jsonenc.AppendString(b, o.Text)
		b = append(b, `,"finish_reason":`...)
		b = jsonenc.AppendString(b, string(finishReason(o)))
		b = append(b, '}')
	}
	b = append(b, `],"usage":`...)
	b = chunks.AppendUsage(b, u)
	return append(b, '}')
}

// appendChunkHead appends the members that start every chunk of a
// stream: id, object and created. Legacy chunks carry no model (spec
// §2.3).
func appendChunkHead(b []byte, id string, created int64) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, id)
	b = append(b, `,"object":"`+ObjectCompletion+`","created":`...)
	return strconv.AppendInt(b, created, 10)
}

// appendChunkPrefix appends the start of every chunk that the handler
// encodes: its head, and the opening bracket of "choices".
func appendChunkPrefix(b []byte, id string, created int64) []byte {
	return append(appendChunkHead(b, id, created), `,"choices":[`...)
}

// appendChunkChoice appends one choice of a chunk and closes the chunk.
// An empty finish is null.
func appendChunkChoice(b []byte, index int, text string, finish endpoint.FinishReason) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"text":`...)
	b = jsonenc.AppendString(b, text)
	b = append(b, `,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = jsonenc.AppendString(b, string(finish))
	}
	return append(b, `}]}`...)
}

// appendUsageChunk appends the final usage chunk after the prefix: empty
// choices and the usage (see chunks.AppendUsageChunk, which the chunk
// writer calls).
func appendUsageChunk(b []byte, u *endpoint.Usage) []byte { return chunks.AppendUsageChunk(b, u) }
