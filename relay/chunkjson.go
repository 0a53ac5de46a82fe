package relay

import (
	"encoding/json"
	"strings"
	"unsafe"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// This file and replyjson.go decode the relay's most frequent upstream
// documents by hand, on a jsonext.Cursor, for their usual shape; anything
// else is left to encoding/json. FuzzDecodeChatChunk and
// FuzzDecodeChatReply check that they agree with it.

// decodeChatChunk decodes the upstream chunk data into c, which must be
// freshly reset, as json.Unmarshal would, without reflection, for the
// usual shape of a chunk: choices with an index, a delta of role,
// content, reasoning_content or reasoning, and a finish_reason; a usage,
// null or of the counts that a reply's usage has (the last chunk of a
// stream with include_usage); members it does not read are skipped. It
// checks the JSON as json.Valid would, in the same pass. For anything
// else (tool calls, an error member, a key that only matches
// case-insensitively, a duplicate member, invalid JSON) it reports
// false, and the caller decodes data with json.Unmarshal into a reset c.
//
// kept receives the spans of the top-level members that a pass-through
// keeps (see [chatStream.passThrough]): all but id, object, created,
// model and usage, which the gateway writes itself or reports apart.
//
// The strings of c may share data's memory, which must not be modified
// while c is in use: readEvents hands over the bytes of an immutable
// string. A stream has one chunk per token: this is the relay's hottest
// path.
func decodeChatChunk(data []byte, c *chatChunk, kept *[]span) bool {
	s := scanner{jsonext.Cursor{Data: data}}
	var seen [2]bool
	return s.Object(func(key []byte) (ok bool) {
		start := s.MemberStart
		switch string(key) {
		case "choices":
			ok = once(&seen[0]) && s.Array(func() bool {
				c.Choices = append(c.Choices, chatChunkChoice{})
				return s.chunkChoice(&c.Choices[len(c.Choices)-1])
			})
		case "usage":
			ok = once(&seen[1]) && s.usage(&c.Usage)
		case "id", "object", "created", "model":
			ok = s.skip()
		default:
			// A key that encoding/json would take for one of these (the
			// gateway's own, say "ID") must not reach the client.
			ok = !foldsTo(key, "choices", "usage", "error", "id", "object", "created", "model") && s.skip()
		}
		switch string(key) {
		case "id", "object", "created", "model", "usage":
		default:
			if ok {
				*kept = append(*kept, span{start, s.Pos})
			}
		}
		return ok
	}) && s.End()
}

// span is the range data[start:end] of a member of a JSON object, from
// its key's opening quote to the end of its value.
type span struct{ start, end int }

// chunkChoice decodes one choice of a chunk.
func (s *scanner) chunkChoice(ch *chatChunkChoice) bool {
	var seen [3]bool
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return once(&seen[0]) && s.int(&ch.Index)
		case "delta":
			return once(&seen[1]) && s.delta(ch)
		case "finish_reason":
			return once(&seen[2]) && s.stringOrNull((*string)(&ch.FinishReason))
		}
		return !foldsTo(key, "index", "delta", "finish_reason") && s.skip()
	})
}

// delta decodes a choice's delta.
func (s *scanner) delta(ch *chatChunkChoice) bool {
	var seen [4]bool
	d := &ch.Delta
	return s.Object(func(key []byte) bool {
		switch string(key) {
		case "role":
			return once(&seen[0]) && s.stringOrNull(&d.Role)
		case "content":
			return once(&seen[1]) && s.stringOrNull(&d.Content)
		case "reasoning_content":
			return once(&seen[2]) && s.stringOrNull(&d.ReasoningContent)
		case "reasoning":
			return once(&seen[3]) && s.stringOrNull(&d.Reasoning)
		}
		return !foldsTo(key, "role", "content", "reasoning_content", "reasoning", "tool_calls") && s.skip()
	})
}

// once marks a member as seen, and reports false for a second one.
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// foldsTo reports whether key equals one of names case-insensitively, as
// encoding/json matches keys.
func foldsTo(key []byte, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

// scanner is the relay's jsonext.Cursor, with the value decoders that
// its documents need. Strings share the document's memory.
type scanner struct {
	jsonext.Cursor
}

// stringOrNull decodes a string into *dst, or leaves it for null. A
// string that means itself (the usual case) shares the document's
// memory: no copy (unsafe measured: two allocations per chunk saved;
// BENCHMARKS.md, JSON codecs).
func (s *scanner) stringOrNull(dst *string) bool {
	if s.Null() {
		return true
	}
	inner, plain, ok := s.Quoted()
	switch {
	case !ok:
		return false
	case plain:
		*dst = unsafe.String(unsafe.SliceData(inner), len(inner))
		return true
	}
	return json.Unmarshal(s.Data[s.Pos-len(inner)-2:s.Pos], dst) == nil
}

// int decodes an integer (see jsonext.Cursor.Int).
func (s *scanner) int(dst *int) bool {
	n, ok := s.Int()
	*dst = n
	return ok
}

// skip moves past the next value, which must be valid JSON.
func (s *scanner) skip() bool {
	_, ok := s.Skip()
	return ok
}
