package jsonext

import (
	"bytes"
	"unicode/utf8"
)

// Cursor reads JSON by hand and checks it as it goes, as json.Valid
// would: the hand decoders of the hot paths (chat requests, the relay's
// upstream chunks and replies) are built on it, each for the usual shape
// of its document, with encoding/json behind them for anything else.
//
// Each method moves past the value at Pos (white space first) and
// reports whether it could. False means invalid JSON or a value the
// method does not handle; Pos is then left anywhere, and the caller is
// expected to give the whole document to encoding/json.
type Cursor struct {
	Data []byte
	Pos  int
	// MemberStart is the index in Data of the opening quote of the key
	// of the member that Object is reading. Nested objects change it:
	// read it before decoding the member's value.
	MemberStart int
}

// Space moves past white space.
func (c *Cursor) Space() {
	c.Pos = SkipSpace(c.Data, c.Pos)
}

// Peek returns the next byte that is not white space, or 0 at the end.
func (c *Cursor) Peek() byte {
	c.Space()
	if c.Pos >= len(c.Data) {
		return 0
	}
	return c.Data[c.Pos]
}

// Consume moves past b if it is the next byte that is not white space.
func (c *Cursor) Consume(b byte) bool {
	if c.Peek() != b {
		return false
	}
	c.Pos++
	return true
}

// End reports whether nothing but white space is left.
func (c *Cursor) End() bool {
	c.Space()
	return c.Pos == len(c.Data)
}

// Object reads an object: for each member it calls member with the
// key, the cursor at the value, which member must move past. Keys must
// be printable ASCII without escapes (what the decoders compare with
// their field names); any other key reports false, as does member.
func (c *Cursor) Object(member func(key []byte) bool) bool {
	if !c.Consume('{') {
		return false
	}
	if c.Consume('}') {
		return true
	}
	for {
		c.Space()
		c.MemberStart = c.Pos
		key, ok := c.key()
		if !ok || !c.Consume(':') || !member(key) {
			return false
		}
		switch c.Peek() {
		case ',':
			c.Pos++
		case '}':
			c.Pos++
			return true
		default:
			return false
		}
	}
}

// key reads the key of a member: a string of printable ASCII without
// escapes.
func (c *Cursor) key() ([]byte, bool) {
	if !c.Consume('"') {
		return nil, false
	}
	start, i := c.Pos, c.Pos
	for i < len(c.Data) && keyByte[c.Data[i]] {
		i++
	}
	if i == len(c.Data) || c.Data[i] != '"' {
		return nil, false
	}
	c.Pos = i + 1
	return c.Data[start:i], true
}

// keyByte marks the bytes of a key that key reads: printable ASCII but
// the quote and the backslash.
var keyByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\'
	}
	return t
}()

// Array reads an array, calling elem with the cursor at each element,
// which elem must move past.
func (c *Cursor) Array(elem func() bool) bool {
	if !c.Consume('[') {
		return false
	}
	if c.Consume(']') {
		return true
	}
	for {
		c.Space()
		if !elem() {
			return false
		}
		switch c.Peek() {
		case ',':
			c.Pos++
		case ']':
			c.Pos++
			return true
		default:
			return false
		}
	}
}

var nullLiteral = []byte("null")

// Null moves past a null, and reports whether there was one.
func (c *Cursor) Null() bool {
	if c.Peek() == 'n' && bytes.HasPrefix(c.Data[c.Pos:], nullLiteral) {
		c.Pos += len(nullLiteral)
		return true
	}
	return false
}

// Quoted moves past a string and returns the bytes between its quotes;
// plain reports that they mean themselves: no escape, valid UTF-8 (see
// Unquote for the others).
func (c *Cursor) Quoted() (inner []byte, plain, ok bool) {
	if c.Peek() != '"' {
		return nil, false, false
	}
	start := c.Pos
	end := ScanString(c.Data, start)
	if end < 0 {
		return nil, false, false
	}
	c.Pos = end
	inner = c.Data[start+1 : end-1]
	return inner, bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner), true
}

// Number moves past a JSON number and returns it.
func (c *Cursor) Number() ([]byte, bool) {
	c.Space()
	start := c.Pos
	end := ScanNumber(c.Data, start)
	if end < 0 {
		return nil, false
	}
	c.Pos = end
	return c.Data[start:end], true
}

// Int reads an integer of at most 18 digits, without fraction or
// exponent (encoding/json refuses those for an int).
func (c *Cursor) Int() (int, bool) {
	num, ok := c.Number()
	if !ok {
		return 0, false
	}
	neg := num[0] == '-'
	if neg {
		num = num[1:]
	}
	if len(num) > 18 {
		return 0, false
	}
	n := 0
	for _, b := range num {
		if b < '0' || b > '9' {
			return 0, false // a fraction or an exponent
		}
		n = n*10 + int(b-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Skip moves past any value, checking it as json.Valid does, and
// returns its bytes. A value nested deeper than ScanValue follows (512
// levels; encoding/json accepts 10 000) reports false.
func (c *Cursor) Skip() ([]byte, bool) {
	c.Space()
	start := c.Pos
	end := ScanValue(c.Data, start)
	if end < 0 {
		return nil, false
	}
	c.Pos = end
	return c.Data[start:end], true
}

// SkipOnce is [Cursor.Skip] that also reports false for a value holding
// an object that names a member twice, or a name it cannot compare byte
// for byte (see [ScanValueOnce]).
func (c *Cursor) SkipOnce() ([]byte, bool) {
	c.Space()
	start := c.Pos
	end := ScanValueOnce(c.Data, start)
	if end < 0 {
		return nil, false
	}
	c.Pos = end
	return c.Data[start:end], true
}
