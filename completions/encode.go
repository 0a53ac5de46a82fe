package completions

import (
	"strconv"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/chat"
)

// The replies are encoded by hand, by appending to a byte slice, as in
// package chat: they are the hot path of the handler, and their shapes
// are fixed. Tests check that the bytes decode to the same values as the
// exported wire types ([Completion], [Chunk]) encode to.

// appendCompletion appends the non-streaming reply.
func appendCompletion(b []byte, id string, created int64, model string, outs []Output, u *chat.Usage) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"object":"`+ObjectCompletion+`","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = appendString(b, model)
	b = append(b, `,"choices":[`...)
	for i := range outs {
		o := &outs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"text":`...)
		b = appendString(b, o.Text)
		b = append(b, `,"finish_reason":`...)
		b = appendString(b, string(finishReason(o)))
		b = append(b, '}')
	}
	b = append(b, `],"usage":`...)
	b = appendUsage(b, u)
	return append(b, '}')
}

// appendUsage appends a usage object.
func appendUsage(b []byte, u *chat.Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	if d := u.CompletionTokensDetails; d != nil {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = strconv.AppendInt(b, int64(d.ReasoningTokens), 10)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendChunkPrefix appends the start of every chunk of a stream, up to
// and including the opening bracket of "choices". Legacy chunks carry no
// model (spec §2.3).
func appendChunkPrefix(b []byte, id string, created int64) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, id)
	b = append(b, `,"object":"`+ObjectCompletion+`","created":`...)
	b = strconv.AppendInt(b, created, 10)
	return append(b, `,"choices":[`...)
}

// appendChunkChoice appends one choice of a chunk and closes the chunk.
// An empty finish is null.
func appendChunkChoice(b []byte, index int, text string, finish chat.FinishReason) []byte {
	b = append(b, `{"index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"text":`...)
	b = appendString(b, text)
	b = append(b, `,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, string(finish))
	}
	return append(b, `}]}`...)
}

// appendUsageChunk appends the final usage chunk after the prefix: empty
// choices and the usage.
func appendUsageChunk(b []byte, u *chat.Usage) []byte {
	b = append(b, `],"usage":`...)
	b = appendUsage(b, u)
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does
// without HTML escaping: quotes, backslashes and control characters are
// escaped, invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are
// escaped for JavaScript.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
