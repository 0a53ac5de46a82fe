package demo

import (
	"unicode"
	"unicode/utf8"
)

// The demo tokenizer. A token is a run of letters and digits, or one other
// non-space character, together with the whitespace just before it;
// whitespace at the very end of a text is one more token. Concatenating
// the tokens of a text gives the text back, so cutting a text at token
// boundaries and streaming it token by token lose nothing.
//
//	"Hello, world!"  →  "Hello" "," " world" "!"            (4 tokens)
//	"  3.14 apples"  →  "  3" "." "14" " apples"            (4 tokens)

// nextToken returns the end of the token that starts at s[i:].
func nextToken(s string, i int) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiSpace[c] {
				i++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	if i >= len(s) {
		return len(s)
	}
	if !wordAt(s, i) {
		_, size := utf8.DecodeRuneInString(s[i:])
		return i + size
	}
	for i < len(s) && wordAt(s, i) {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// asciiSpace holds the ASCII characters that unicode.IsSpace accepts.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// wordAt reports whether the character at s[i] is a letter or a digit.
func wordAt(s string, i int) bool {
	if c := s[i]; c < utf8.RuneSelf {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// CountTokens returns the number of tokens of s for the demo tokenizer
// (see the package documentation).
func CountTokens(s string) int {
	n := 0
	for i := 0; i < len(s); i = nextToken(s, i) {
		n++
	}
	return n
}

// cutTokens returns the first n tokens of s, and whether that is less than
// all of s.
func cutTokens(s string, n int) (string, bool) {
	i := 0
	for ; i < len(s) && n > 0; n-- {
		i = nextToken(s, i)
	}
	return s[:i], i < len(s)
}
