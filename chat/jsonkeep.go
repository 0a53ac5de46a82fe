package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// unmarshalKeeping decodes data into v (a pointer to a type without its
// own UnmarshalJSON, usually a local alias) and returns the members of the
// JSON object that known does not name, or nil when there are none. It
// does what jsonext.Unmarshal does, with a cheaper second pass: instead of
// decoding every member into a map, it scans the object's keys and copies
// only the members it keeps. Requests rarely carry unknown fields, so the
// usual cost is one scan and no allocation.
func unmarshalKeeping(data []byte, v any, known jsonext.FieldSet) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return unknownMembers(data, known)
}

var errMalformed = errors.New("chat: malformed JSON object")

// unknownMembers returns the members of the JSON object data whose keys
// known does not hold, in a map of copies, or nil if there are none (or
// data is not an object). data is expected to be valid JSON; malformed
// input is an error, never a panic.
func unknownMembers(data []byte, known jsonext.FieldSet) (map[string]json.RawMessage, error) {
	var extra map[string]json.RawMessage
	err := walkObject(data, func(key, val []byte) error {
		return keepUnknown(&extra, known, key, val)
	})
	if err != nil {
		return nil, err
	}
	return extra, nil
}

// keepUnknown adds the member (key, val) to *extra, a copy of val under the
// unquoted key, unless known holds the key.
func keepUnknown(extra *map[string]json.RawMessage, known jsonext.FieldSet, key, val []byte) error {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 && isKnown(known, inner) {
		return nil
	}
	name, ok := memberName(key)
	if !ok {
		return errMalformed
	}
	if _, known := known[name]; known {
		return nil
	}
	if *extra == nil {
		*extra = make(map[string]json.RawMessage)
	}
	(*extra)[name] = bytes.Clone(val)
	return nil
}

// keyIs reports whether the quoted JSON key is name.
func keyIs(key []byte, name string) bool {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == name
	}
	s, ok := memberName(key)
	return ok && s == name
}

// walkObject calls fn with the quoted key and the raw value of each member
// of the JSON object data, in order. It does nothing if data is not an
// object (null, say). data is expected to be valid JSON; malformed input
// is an error, never a panic.
func walkObject(data []byte, fn func(key, val []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil
	}
	for i++; ; {
		i = skipSpace(data, i)
		if i >= len(data) {
			return errMalformed
		}
		switch data[i] {
		case '}':
			return nil
		case ',':
			i++
			continue
		}
		end := skipString(data, i)
		if end < 0 {
			return errMalformed
		}
		key := data[i:end]
		i = skipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return errMalformed
		}
		i = skipSpace(data, i+1)
		vend := skipValue(data, i)
		if vend < 0 {
			return errMalformed
		}
		if err := fn(key, data[i:vend]); err != nil {
			return err
		}
		i = vend
	}
}

// walkArray calls fn with each element of the JSON array data, in order.
// It does nothing if data is not an array.
func walkArray(data []byte, fn func(elem []byte) error) error {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil
	}
	for i++; ; {
		i = skipSpace(data, i)
		if i >= len(data) {
			return errMalformed
		}
		switch data[i] {
		case ']':
			return nil
		case ',':
			i++
			continue
		}
		end := skipValue(data, i)
		if end < 0 {
			return errMalformed
		}
		if err := fn(data[i:end]); err != nil {
			return err
		}
		i = end
	}
}

// isKnown reports whether known holds name, without allocating.
func isKnown(known jsonext.FieldSet, name []byte) bool {
	_, ok := known[string(name)]
	return ok
}

// memberName unquotes a JSON string key. Keys without escapes, the usual
// case, are converted directly.
func memberName(q []byte) (string, bool) {
	inner := q[1 : len(q)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err == nil
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

// skipString returns the end of the JSON string that starts at data[i],
// or -1.
func skipString(data []byte, i int) int {
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

// skipValue returns the end of the JSON value that starts at data[i], or
// -1.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
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
	start := i
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

// simpleString returns the string that the JSON string q holds when it
// needs no unescaping: no backslash, no control character, valid UTF-8.
func simpleString(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	inner := q[1 : len(q)-1]
	for _, c := range inner {
		if c < 0x20 || c == '\\' || c == '"' {
			return "", false
		}
	}
	if !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}
