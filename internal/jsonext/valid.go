package jsonext

// This file holds the validating counterparts of SkipString and
// SkipValue: they accept exactly what json.Valid accepts, so that a
// decoder that walks bytes by hand can check them in the same pass
// instead of running json.Valid first (a second pass, and on short
// documents the larger part of the cost).

// maxDepth bounds the nesting that ScanValue follows. encoding/json
// allows 10 000 levels; ScanValue reports deeper values as invalid, and
// a caller with a fallback to encoding/json leaves them to it.
const maxDepth = 512

// ScanString returns the index just past the JSON string that starts at
// data[i], or -1 if no valid string starts there: unterminated, with a
// control character, or with an escape that JSON does not define. As with
// json.Valid, invalid UTF-8 is accepted.
func ScanString(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	for i++; i < len(data); i++ {
		for i < len(data) && plainByte[data[i]] {
			i++ // the usual bytes, in a tight loop
		}
		if i == len(data) {
			return -1
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(data) {
				return -1
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return -1
				}
				for _, h := range data[i+1 : i+5] {
					if !isHex(h) {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// plainByte marks the bytes that stand for themselves inside a JSON
// string: all but the quote, the backslash and control characters.
var plainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ScanValue returns the index just past the JSON value that starts at
// data[i], checked as json.Valid checks it (white space inside objects
// and arrays included), or -1 if no valid value starts there. Values
// nested deeper than 512 levels are reported invalid.
func ScanValue(data []byte, i int) int {
	return scanValue(data, i, 0, false)
}

// ScanValueOnce is [ScanValue] that also reports -1 for a value holding
// an object that names a member twice (see [DuplicateMember], here with
// names compared exactly), or a member whose name it cannot compare byte
// for byte: one with an escape or invalid UTF-8. It checks both in the one
// pass; a caller with a fallback leaves such values to it.
func ScanValueOnce(data []byte, i int) int {
	return scanValue(data, i, 0, true)
}

func scanValue(data []byte, i, depth int, once bool) int {
	if i >= len(data) {
		return -1
	}
	switch c := data[i]; {
	case c == '"':
		return ScanString(data, i)
	case c == '{' && once:
		return scanObjectOnce(data, i, depth+1)
	case c == '{':
		return scanObject(data, i, depth+1)
	case c == '[':
		return scanArray(data, i, depth+1, once)
	case c == 't':
		return scanLiteral(data, i, "true")
	case c == 'f':
		return scanLiteral(data, i, "false")
	case c == 'n':
		return scanLiteral(data, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return ScanNumber(data, i)
	}
	return -1
}

func scanLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// ScanNumber returns the index just past the JSON number that starts at
// data[i], or -1 if none does: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func ScanNumber(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		i = digits(data, i)
	default:
		return -1
	}
	if i < len(data) && data[i] == '.' {
		if i = digits(data, i+1); i < 0 {
			return -1
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i = digits(data, i); i < 0 {
			return -1
		}
	}
	return i
}

// digits returns the index past the run of at least one digit at
// data[i], or -1 if there is none.
func digits(data []byte, i int) int {
	start := i
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	if i == start {
		return -1
	}
	return i
}

func scanObject(data []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1
	}
	for {
		if i = ScanString(data, i); i < 0 {
			return -1
		}
		var done bool
		if i, done = scanMember(data, i, depth, false); done {
			return i
		}
	}
}

// scanObjectOnce is scanObject for ScanValueOnce: it also checks that
// each member's name is new to the object.
func scanObjectOnce(data []byte, i, depth int) int {
	if depth > maxDepth {
		return -1
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1
	}
	var seen nameSet // views of data
	for {
		start := i
		if i = scanName(data, i); i < 0 {
			return -1
		}
		name := data[start+1 : i-1]
		if !seen.add(name) {
			return -1
		}
		var done bool
		if i, done = scanMember(data, i, depth, true); done {
			return i
		}
	}
}

// scanMember scans what follows the name of an object's member that
// ends at data[i]: the colon, the value, and the comma or closing brace
// after it. It returns the index of the next member's name and false,
// or, with true, the index just past the object or -1 if the object is
// malformed.
func scanMember(data []byte, i, depth int, once bool) (int, bool) {
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1, true
	}
	if i = scanValue(data, SkipSpace(data, i+1), depth, once); i < 0 {
		return -1, true
	}
	if i = SkipSpace(data, i); i >= len(data) {
		return -1, true
	}
	switch data[i] {
	case '}':
		return i + 1, true
	case ',':
		return SkipSpace(data, i+1), false
	}
	return -1, true
}

// scanName returns the index just past the member name that starts at
// data[i], or -1 if it is not a valid string or not one that means its
// bytes (an escape, invalid UTF-8). A name of printable ASCII, the usual
// one, is read in one tight loop.
func scanName(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	j := i + 1
	for j < len(data) && keyByte[data[j]] {
		j++
	}
	if j < len(data) && data[j] == '"' {
		return j + 1
	}
	end := ScanString(data, i) // another byte: the slow way
	if end < 0 || !plain(data[i+1:end-1]) {
		return -1
	}
	return end
}

func scanArray(data []byte, i, depth int, once bool) int {
	if depth > maxDepth {
		return -1
	}
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1
	}
	for {
		if i = scanValue(data, i, depth, once); i < 0 {
			return -1
		}
		if i = SkipSpace(data, i); i >= len(data) {
			return -1
		}
		switch data[i] {
		case ']':
			return i + 1
		case ',':
			i = SkipSpace(data, i+1)
		default:
			return -1
		}
	}
}
