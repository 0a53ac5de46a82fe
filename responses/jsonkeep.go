package responses

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
// does what jsonext.Unmarshal does with a cheaper second pass: instead of
// decoding every member into a map, it scans the object's keys and copies
// only the members it keeps. Requests rarely carry unknown fields, so the
// usual cost is one scan and no allocation.
//
// (chat has the same scanner, unexported; both belong in internal/jsonext.)
func unmarshalKeeping(data []byte, v any, known jsonext.FieldSet) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return unknownMembers(data, known)
}

var errMalformed = errors.New("responses: malformed JSON object")

// unknownMembers returns copies of the members of the JSON object data
// whose keys known does not hold, or nil if there are none (or data is not
// an object). Malformed input is an error, never a panic.
func unknownMembers(data []byte, known jsonext.FieldSet) (map[string]json.RawMessage, error) {
	var extra map[string]json.RawMessage
	err := walkObject(data, func(key, val []byte) error {
		inner := key[1 : len(key)-1]
		if bytes.IndexByte(inner, '\\') < 0 {
			if _, ok := known[string(inner)]; ok { // no allocation
				return nil
			}
		}
		name, ok := memberName(key)
		if !ok {
			return errMalformed
		}
		if _, ok := known[name]; ok {
			return nil
		}
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[name] = bytes.Clone(val)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return extra, nil
}

// walkObject calls fn with the quoted key and the raw value of each member
// of the JSON object data, in order. It does nothing if data is not an
// object.
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

// unquote returns the string that the JSON string q holds: directly when
// it needs no unescaping (no backslash, no control character, valid
// UTF-8), else through encoding/json.
func unquote(q []byte) (string, error) {
	if len(q) >= 2 && q[0] == '"' && q[len(q)-1] == '"' {
		inner := q[1 : len(q)-1]
		simple := true
		for _, c := range inner {
			if c < 0x20 || c == '\\' || c == '"' {
				simple = false
				break
			}
		}
		if simple && utf8.Valid(inner) {
			return string(inner), nil
		}
	}
	var s string
	err := json.Unmarshal(q, &s)
	return s, err
}

// memberName unquotes a JSON string key.
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
