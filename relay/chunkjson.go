package relay

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// decodeChatChunk decodes the upstream chunk data into c, which must be
// freshly reset, as json.Unmarshal would, without reflection, for the
// usual shape of a chunk: choices with an index, a delta of role,
// content, reasoning_content or reasoning, and a finish_reason; members
// it does not read are skipped, and "usage" may be null. It checks the
// JSON as json.Valid would, in the same pass. For anything else (tool
// calls, a usage object, an error member, a key that only matches
// case-insensitively, a duplicate member, invalid JSON) it reports
// false, and the caller decodes data with json.Unmarshal into a reset c.
// The fuzz test FuzzDecodeChatChunk checks that it agrees with
// encoding/json whenever it reports true.
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
	s := scanner{d: data}
	if !s.open() {
		return false
	}
	var seen bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return s.end()
		}
		start := s.key
		switch string(key) {
		case "choices":
			ok = once(&seen) && s.choices(c)
		case "usage":
			ok = s.null()
		case "id", "object", "created", "model":
			ok = s.skip()
		default:
			// A key that encoding/json would take for one of these (the
			// gateway's own, say "ID") must not reach the client.
			ok = !foldsTo(key, "choices", "usage", "error", "id", "object", "created", "model") && s.skip()
		}
		if !ok {
			return false
		}
		switch string(key) {
		case "id", "object", "created", "model", "usage":
		default:
			*kept = append(*kept, span{start, s.i})
		}
	}
}

// span is the range data[start:end] of a member of a JSON object, from
// its key's opening quote to the end of its value.
type span struct{ start, end int }

// choices decodes the choices array.
func (s *scanner) choices(c *chatChunk) bool {
	if s.peek() != '[' {
		return false
	}
	s.i++
	for n := 0; ; n++ {
		done, ok := s.elem(n)
		switch {
		case !ok:
			return false
		case done:
			return true
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
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
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
			ok = once(&seen[2]) && s.stringOrNull((*string)(&ch.FinishReason))
		default:
			ok = !foldsTo(key, "index", "delta", "finish_reason") && s.skip()
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
	var seen [4]bool
	for n := 0; ; n++ {
		key, done, ok := s.member(n)
		switch {
		case !ok:
			return false
		case done:
			return true
		}
		switch string(key) {
		case "role":
			ok = once(&seen[0]) && s.stringOrNull(&ch.Delta.Role)
		case "content":
			ok = once(&seen[1]) && s.stringOrNull(&ch.Delta.Content)
		case "reasoning_content":
			ok = once(&seen[2]) && s.stringOrNull(&ch.Delta.ReasoningContent)
		case "reasoning":
			ok = once(&seen[3]) && s.stringOrNull(&ch.Delta.Reasoning)
		default:
			ok = !foldsTo(key, "role", "content", "reasoning_content", "reasoning", "tool_calls") && s.skip()
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

// scanner is a cursor over JSON that it checks as it goes, with package
// jsonext's validating skips: every method reports false for bytes that
// are not JSON, or not the JSON it expects.
type scanner struct {
	d   []byte
	i   int
	key int // the index of the opening quote of the last key read
}

// ws moves past white space.
func (s *scanner) ws() {
	s.i = jsonext.SkipSpace(s.d, s.i)
}

// peek returns the first byte of the next value, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.d) {
		return 0
	}
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

// end reports whether nothing but white space follows the value read.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.d)
}

// member moves to member n (from 0) of the object being read, past the
// ',' that separates it from the one before, and returns its unquoted
// key, positioned at its value; done reports (and consumes) the '}' that
// ends the object instead. A key with escapes reports !ok.
func (s *scanner) member(n int) (key []byte, done, ok bool) {
	if done, ok = s.next(n, '}'); done || !ok {
		return nil, done, ok
	}
	start := s.i
	end := jsonext.ScanString(s.d, start)
	if end < 0 {
		return nil, false, false
	}
	key = s.d[start+1 : end-1]
	s.i = end
	if bytes.IndexByte(key, '\\') >= 0 || s.peek() != ':' {
		return nil, false, false
	}
	s.i++
	s.key = start
	return key, false, true
}

// elem moves to element n (from 0) of the array being read, as member
// does for objects.
func (s *scanner) elem(n int) (done, ok bool) {
	return s.next(n, ']')
}

// next moves to item n of an object or array that ends with closer:
// past the ',' before it, unless it is the first; done reports (and
// consumes) the closer instead.
func (s *scanner) next(n int, closer byte) (done, ok bool) {
	switch s.peek() {
	case closer:
		s.i++
		return true, true
	case ',':
		if n == 0 {
			return false, false
		}
		s.i++
		s.ws()
		return false, true
	}
	return false, n == 0
}

// null consumes a null, or reports false for another value.
func (s *scanner) null() bool {
	if s.peek() != 'n' || !bytes.HasPrefix(s.d[s.i:], []byte("null")) {
		return false
	}
	s.i += len("null")
	return true
}

// stringOrNull decodes a string into *dst, or leaves it for null.
func (s *scanner) stringOrNull(dst *string) bool {
	switch s.peek() {
	case 'n':
		return s.null()
	case '"':
	default:
		return false
	}
	start := s.i
	if s.i = jsonext.ScanString(s.d, start); s.i < 0 {
		return false
	}
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

// int decodes a small integer: a JSON number of at most 9 digits, without
// fraction or exponent.
func (s *scanner) int(dst *int) bool {
	s.ws()
	start := s.i
	end := jsonext.ScanNumber(s.d, start)
	if end < 0 {
		return false
	}
	digits := s.d[start:end]
	neg := digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) > 9 {
		return false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false // a fraction or an exponent
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	*dst = n
	s.i = end
	return true
}

// skip moves past the next value, which must be valid JSON.
func (s *scanner) skip() bool {
	s.ws()
	s.i = jsonext.ScanValue(s.d, s.i)
	return s.i >= 0
}
