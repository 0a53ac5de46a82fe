// Package jsonenc holds the hand-written JSON encoding helpers that the
// text endpoints use on their hot path.
package jsonenc

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped as encoding/json does
// without HTML escaping: quotes, backslashes and control characters are
// escaped, invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are
// escaped for JavaScript.
func AppendString(b []byte, s string) []byte {
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

// AppendMembers appends the members of raw, a JSON object, to b, after a
// comma, without raw's braces: b ends inside an object that has members
// already, and stays open.
func AppendMembers(b, raw []byte) []byte {
	if len(raw) <= 2 {
		return b
	}
	b = append(b, ',')
	return append(b, raw[1:len(raw)-1]...)
}

// IsObject reports whether raw, which the caller knows to be valid JSON,
// is an object.
func IsObject(raw []byte) bool {
	return len(raw) >= 2 && raw[0] == '{' && raw[len(raw)-1] == '}'
}
