package relay

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// decodeChatChunk decodes the upstream chunk data into c, which must be
// freshly reset, as json.Unmarshal would, without reflection, for the
// usual shape of a chunk: choices with an index, a delta of content,
// reasoning_content or reasoning (and role), and a finish_reason; members
// it does not read are skipped, and "usage" may be null. For anything
// else (tool calls, a usage object, an error member, a key that only
// matches case-insensitively, a duplicate member, invalid JSON) it
// reports false, and the caller decodes data with json.Unmarshal into a
// reset c. The fuzz test FuzzDecodeChatChunk checks that it agrees with
// encoding/json whenever it reports true.
//
// The strings of c may share data's memory, which must not be modified
// while c is in use: readEvents hands over the bytes of an immutable
// string. A stream has one chunk per token: this is the relay's hottest
// path.
func decodeChatChunk(data []byte, c *chatChunk) bool {
	if !json.Valid(data) {
		return false
	}
	s := scanner{d: data}
	if !s.open() {
		return false
	}
	var seen bool
	for {
		key, done, ok := s.key()
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "choices":
			if !once(&seen) || !s.choices(c) {
				return false
			}
		case "usage":
			if !s.null() {
				return false
			}
		default:
			if foldsTo(key, "choices", "usage", "error") {
				return false
			}
			s.skip()
		}
	}
}

// choices decodes the choices array.
func (s *scanner) choices(c *chatChunk) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	for {
		s.ws()
		switch s.d[s.i] {
		case ']':
			s.i++
			return true
		case ',':
			s.i++
			continue
		}
		c.Choices = append(c.Choices, chatChunkChoice{})
		if !s.choice(&c.Choices[len(c.Choices)-1]) {
			return false
		}
	}
}

// choice decodes one choice.
func (s *scanner) choice(ch *chatChunkChoice) bool {
	if !s.open() {
		return false
	}
	var seen [3]bool
	for {
		key, done, ok := s.key()
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "index":
			ok = once(&seen[0]) && s.int(&ch.Index)
		case "delta":
			ok = once(&seen[1]) && s.delta(ch)
		case "finish_reason":
			var f string
			ok = once(&seen[2]) && s.stringOrNull(&f)
			ch.FinishReason = chat.FinishReason(f)
		default:
			ok = !foldsTo(key, "index", "delta", "finish_reason")
			if ok {
				s.skip()
			}
		}
		if !ok {
			return false
		}
	}
}

// delta decodes a choice's delta.
func (s *scanner) delta(ch *chatChunkChoice) bool {
	if !s.open() {
		return false
	}
	var seen [3]bool
	for {
		key, done, ok := s.key()
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "content":
			ok = once(&seen[0]) && s.stringOrNull(&ch.Delta.Content)
		case "reasoning_content":
			ok = once(&seen[1]) && s.stringOrNull(&ch.Delta.ReasoningContent)
		case "reasoning":
			ok = once(&seen[2]) && s.stringOrNull(&ch.Delta.Reasoning)
		default:
			ok = !foldsTo(key, "content", "reasoning_content", "reasoning", "tool_calls")
			if ok {
				s.skip()
			}
		}
		if !ok {
			return false
		}
	}
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

// scanner walks JSON that json.Valid accepted, a cursor over package
// jsonext's scanner: on valid JSON its skips never fail, so the methods
// need no error checks.
type scanner struct {
	d []byte
	i int
}

// ws moves past white space.
func (s *scanner) ws() {
	s.i = jsonext.SkipSpace(s.d, s.i)
}

// peek returns the first byte of the next value.
func (s *scanner) peek() byte {
	s.ws()
	return s.d[s.i]
}

// open consumes the '{' that starts the next value, or reports false
// for another value.
func (s *scanner) open() bool {
	if s.peek() != '{' {
		return false
	}
	s.i++
	return true
}

// key moves to the next member of the object being read and returns its
// unquoted key, positioned at its value; done reports (and consumes) the
// end of the object. A key with escapes reports !ok.
func (s *scanner) key() (key []byte, done, ok bool) {
	for {
		s.ws()
		switch s.d[s.i] {
		case '}':
			s.i++
			return nil, true, true
		case ',':
			s.i++
			continue
		}
		start := s.i + 1
		s.skipString()
		key = s.d[start : s.i-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false, false
		}
		s.ws()
		s.i++ // ':'
		return key, false, true
	}
}

// null consumes a null, or reports false for another value.
func (s *scanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	s.i += len("null")
	return true
}

// stringOrNull decodes a string into *dst, or leaves it for null.
func (s *scanner) stringOrNull(dst *string) bool {
	switch s.peek() {
	case 'n':
		s.i += len("null")
		return true
	case '"':
	default:
		return false
	}
	start := s.i
	s.skipString()
	tok := s.d[start:s.i]
	inner := tok[1 : len(tok)-1]
	if simple(inner) {
		// No copy: data is never modified (see decodeChatChunk).
		*dst = unsafe.String(unsafe.SliceData(inner), len(inner))
		return true
	}
	return json.Unmarshal(tok, dst) == nil
}

// simple reports whether a string's bytes need no unescaping or
// replacement: no escape, no control character, valid UTF-8.
func simple(b []byte) bool {
	ascii := true
	for _, c := range b {
		if c < 0x20 || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(b)
}

// int decodes a small integer (at most 9 digits, no fraction or exponent).
func (s *scanner) int(dst *int) bool {
	s.ws()
	neg := s.d[s.i] == '-'
	if neg {
		s.i++
	}
	start, n := s.i, 0
	for s.i < len(s.d) && s.d[s.i] >= '0' && s.d[s.i] <= '9' {
		n = n*10 + int(s.d[s.i]-'0')
		s.i++
	}
	if s.i == start || s.i-start > 9 {
		return false
	}
	if s.i < len(s.d) {
		switch s.d[s.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// skipString moves past the string that starts at s.i.
func (s *scanner) skipString() {
	s.i = jsonext.SkipString(s.d, s.i)
}

// skip moves past the next value.
func (s *scanner) skip() {
	s.ws()
	s.i = jsonext.SkipValue(s.d, s.i)
}
