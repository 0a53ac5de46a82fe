package jsonext

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// This file holds a small scanner over raw JSON: it finds the members of
// an object and the elements of an array without decoding them, so that a
// decoder can collect what its types do not model in one cheap pass
// instead of decoding every member into a map.
//
// The scanner does not validate: it expects JSON that encoding/json has
// already accepted (json.Valid, or a json.Unmarshal that succeeded), and
// on anything else it reports an error or -1, never panics. Its
// validating counterparts are in valid.go (ScanString, ScanValue), and
// Cursor (cursor.go) decodes by hand on top of them.

// errMalformed reports input that the scanner cannot walk.
var errMalformed = errors.New("jsonext: malformed JSON")

// UnknownMembers returns copies of the members of the JSON object data
// whose keys known does not hold, or nil if there are none or data is not
// an object (null, say). Keys are matched exactly, as [Unmarshal] does;
// for a key given twice the last member wins, as in a decoded map.
func UnknownMembers(data []byte, known FieldSet) (map[string]json.RawMessage, error) {
	var extra map[string]json.RawMessage
	err := WalkObject(data, func(key, val []byte) error {
		return KeepUnknown(&extra, known, key, val)
	})
	if err != nil {
		return nil, err
	}
	return extra, nil
}

// KeepUnknown adds a copy of val to *extra under the unquoted key, unless
// known holds that key; it allocates *extra on the first member it keeps.
// key is a quoted key and val a raw value, as [WalkObject] passes them: a
// decoder that handles some members itself calls KeepUnknown for the rest.
func KeepUnknown(extra *map[string]json.RawMessage, known FieldSet, key, val []byte) error {
	if len(key) < 2 {
		return errMalformed
	}
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		if _, ok := known[string(inner)]; ok { // no allocation
			return nil
		}
	}
	name, err := Unquote(key)
	if err != nil {
		return err
	}
	if _, ok := known[name]; ok {
		return nil
	}
	if *extra == nil {
		*extra = make(map[string]json.RawMessage)
	}
	(*extra)[name] = bytes.Clone(val)
	return nil
}

// KeyIs reports whether the quoted JSON key, as [WalkObject] passes it, is
// name once unquoted, for a name in valid UTF-8 without U+FFFD (a key's
// invalid UTF-8 is compared as is, not replaced as encoding/json would).
// It allocates only for a key with escapes.
func KeyIs(key []byte, name string) bool {
	if len(key) < 2 {
		return false
	}
	if inner := key[1 : len(key)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == name
	}
	s, err := Unquote(key)
	return err == nil && s == name
}

// WalkObject calls fn with the quoted key and the raw value (without
// surrounding space) of each member of the JSON object data, in order,
// and stops at the first error fn returns. It does nothing if data is not
// an object.
func WalkObject(data []byte, fn func(key, val []byte) error) error {
	return walk(data, '{', '}', func(i int) (int, error) {
		end := SkipString(data, i)
		if end < 0 {
			return 0, errMalformed
		}
		key := data[i:end]
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return 0, errMalformed
		}
		i = SkipSpace(data, i+1)
		vend := SkipValue(data, i)
		if vend < 0 {
			return 0, errMalformed
		}
		return vend, fn(key, data[i:vend])
	})
}

// WalkArray calls fn with each raw element of the JSON array data, in
// order, and stops at the first error fn returns. It does nothing if data
// is not an array.
func WalkArray(data []byte, fn func(elem []byte) error) error {
	return walk(data, '[', ']', func(i int) (int, error) {
		end := SkipValue(data, i)
		if end < 0 {
			return 0, errMalformed
		}
		return end, fn(data[i:end])
	})
}

// walk calls elem with the index of each element of the JSON object or
// array (delimited by open and end) that data holds, which returns the
// index just past the element, and stops at the first error elem
// returns. It does nothing if data holds no such value.
func walk(data []byte, open, end byte, elem func(i int) (int, error)) error {
	i := SkipSpace(data, 0)
	if i >= len(data) || data[i] != open {
		return nil
	}
	for i++; ; {
		i = SkipSpace(data, i)
		if i >= len(data) {
			return errMalformed
		}
		switch data[i] {
		case end:
			return nil
		case ',':
			i++
			continue
		}
		var err error
		if i, err = elem(i); err != nil {
			return err
		}
	}
}

// Unquote returns the string that the JSON string q holds, exactly as
// encoding/json decodes it. A string that needs no unescaping (no
// backslash, no control character, valid UTF-8), the usual case, costs one
// scan and the string's allocation.
func Unquote(q []byte) (string, error) {
	if len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' && plain(q[1:len(q)-1]) {
		return string(q[1 : len(q)-1]), nil
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

// plain reports whether the inside of a JSON string means itself: no
// escape, quote or control character, and valid UTF-8.
func plain(b []byte) bool {
	ascii := true
	for _, c := range b {
		if c < 0x20 || c == '\\' || c == '"' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(b)
}

// SkipSpace returns the index of the first byte of data at or after i
// that is not JSON white space, or len(data).
func SkipSpace(data []byte, i int) int {
	if i < len(data) && data[i] > ' ' {
		return i // the usual case: compact JSON has no white space
	}
	return skipSpace(data, i)
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// SkipString returns the index just past the JSON string that starts at
// data[i], or -1 if no string starts there or it does not end.
func SkipString(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// SkipValue returns the index just past the JSON value that starts at
// data[i] (a string, an object, an array or a literal), or -1 if none
// does. Objects and arrays are matched by bracket depth, not validated.
func SkipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return SkipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = SkipString(data, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i // a number, true, false or null
	for i < len(data) {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			if i == start {
				return -1
			}
			return i
		}
		i++
	}
	if i == start {
		return -1
	}
	return i
}
