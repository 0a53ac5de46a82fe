package chat

import (
	"strconv"

	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

// The replies are encoded by hand, by appending to a byte slice: they are
// the hot path of the handler, and their shapes are fixed. Tests check
// that the bytes decode to the same values as the exported wire types
// ([Completion], [Chunk]) encode to.

// appendHead appends the members that start every reply and chunk: id,
// object, created and model.
func appendHead(b []byte, object, id string, created int64, model string) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, id)
	b = append(b, `,"object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	return jsonenc.AppendString(b, model)
}

// appendRawCompletion appends the non-streaming reply of a Result with
// Raw: the head, Raw's members and the usage.
func appendRawCompletion(b []byte, id string, created int64, model string, raw []byte, u *Usage) []byte {
	b = jsonenc.AppendMembers(appendHead(b, ObjectCompletion, id, created, model), raw)
	b = append(b, `,"usage":`...)
	b = chunks.AppendUsage(b, u)
	return append(b, '}')
}

// appendCompletion appends the non-streaming reply.
func appendCompletion(b []byte, id string, created int64, model string, outs []Output, u *Usage) []byte {
	b = appendHead(b, ObjectCompletion, id, created, model)
	b = append(b, `,"choices":[`...)
	for i := range outs {
		o := &outs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"message":{"role":"assistant","content":`...)
		if o.Content == "" && len(o.ToolCalls) > 0 {
			b = append(b, "null"...)
		} else {
			b = jsonenc.AppendString(b, o.Content)
		}
		if o.Reasoning != "" {
			b = append(b, `,"reasoning_content":`...)
			b = jsonenc.AppendString(b, o.Reasoning)
		}
		if len(o.ToolCalls) > 0 {
			b = append(b, `,"tool_calls":[`...)
			for j := range o.ToolCalls {
				tc := &o.ToolCalls[j]
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"id":`...)
				b = jsonenc.AppendString(b, tc.ID)
				b = append(b, `,"type":`...)
				b = jsonenc.AppendString(b, tc.Type)
				b = append(b, `,"function":{"name":`...)
				b = jsonenc.AppendString(b, tc.Function.Name)
				b = append(b, `,"arguments":`...)
				b = jsonenc.AppendString(b, tc.Function.Arguments)
				b = append(b, `}}`...)
			}
			b = append(b, ']')
		}
		b = append(b, `},"finish_reason":`...)
		b = jsonenc.AppendString(b, string(o.FinishReason))
		b = append(b, '}')
	}
	b = append(b, `],"usage":`...)
	b = chunks.AppendUsage(b, u)
	return append(b, '}')
}

// appendChunkHead appends the members that start every chunk of a
// stream: id, object, created and model.
func appendChunkHead(b []byte, id string, created int64, model string) []byte {
	return appendHead(b, ObjectChunk, id, created, model)
}

// appendChunkPrefix appends the start of every chunk that the handler
// encodes: its head, and the opening bracket of "choices".
func appendChunkPrefix(b []byte, id string, created int64, model string) []byte {
	return append(appendChunkHead(b, id, created, model), `,"choices":[`...)
}

// appendChunkChoice appends one choice of a chunk and closes the chunk.
// role adds "role":"assistant"; calls are the tool-call fragments; an
// empty finish is null.
func appendChunkChoice(b []byte, index int, role bool, content, reasoning string, calls []ToolCallChunk, finish FinishReason) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"delta":{`...)
	sep := false
	if role {
		b, sep = appendField(b, sep, `"role":"assistant"`)
	}
	if content != "" {
		b, sep = appendField(b, sep, `"content":`)
		b = jsonenc.AppendString(b, content)
	}
	if reasoning != "" {
		b, sep = appendField(b, sep, `"reasoning_content":`)
		b = jsonenc.AppendString(b, reasoning)
	}
	if len(calls) > 0 {
		b, _ = appendField(b, sep, `"tool_calls":[`)
		for i := range calls {
			c := &calls[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(c.Index), 10)
			if c.ID != "" {
				b = append(b, `,"id":`...)
				b = jsonenc.AppendString(b, c.ID)
			}
			if c.Type != "" {
				b = append(b, `,"type":`...)
				b = jsonenc.AppendString(b, c.Type)
			}
			b = append(b, `,"function":{`...)
			if c.Function.Name != "" {
				b = append(b, `"name":`...)
				b = jsonenc.AppendString(b, c.Function.Name)
				b = append(b, ',')
			}
			b = append(b, `"arguments":`...)
			b = jsonenc.AppendString(b, c.Function.Arguments)
			b = append(b, `}}`...)
		}
		b = append(b, ']')
	}
	b = append(b, `},"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = jsonenc.AppendString(b, string(finish))
	}
	return append(b, `}]}`...)
}

// appendField appends a comma unless the field is the first (sep false),
// then the field's name.
func appendField(b []byte, sep bool, name string) ([]byte, bool) {
	if sep {
		b = append(b, ',')
	}
	return append(b, name...), true
}

// appendUsageChunk appends the final usage chunk after the prefix: empty
// choices and the usage (see chunks.AppendUsageChunk, which the chunk
// writer calls).
func appendUsageChunk(b []byte, u *Usage) []byte { return chunks.AppendUsageChunk(b, u) }

func itoa(n int) string { return strconv.Itoa(n) }
