package jsonext

import (
	"bytes"
	"encoding/json"
)

// Kind names the JSON kind of a value from its first byte: "string",
// "array", "object", "boolean", "null" or "number".
func Kind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// StringOrArray decodes b, a JSON string, an array of T, null or
// nothing, as the content unions of chat and responses are sent: a
// string into *text, an array into *list (a non-nil empty slice when it
// is empty), and null or nothing into neither. A value of another kind
// is not a decoding error: StringOrArray returns its [Kind], for
// validation to report.
func StringOrArray[T any](b []byte, text **string, list *[]T) (invalid string, err error) {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "", nil
	}
	switch b[0] {
	case '"':
		s, err := Unquote(b)
		if err != nil {
			return "", err
		}
		*text = &s
	case '[':
		l := []T{}
		if err := json.Unmarshal(b, &l); err != nil {
			return "", err
		}
		*list = l
	case 'n':
	default:
		return Kind(b[0]), nil
	}
	return "", nil
}

// Strings decodes b, null, a JSON string or an array of strings, into
// *list, as the string-or-strings members of requests (stop, prompt)
// are sent: null (or nothing) is nil, a string one element and an array
// its elements. It reports false, leaving *list as it was, for a value of
// another kind, an array of anything but strings included.
func Strings(b []byte, list *[]string) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] == 'n' {
		*list = nil
		return true
	}
	var l []string
	switch b[0] {
	case '"':
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return false
		}
		l = []string{one}
	case '[':
		if err := json.Unmarshal(b, &l); err != nil {
			return false
		}
	default:
		return false
	}
	*list = l
	return true
}
