package errors

import (
	"strconv"
	"unicode/utf8"
)

// MaxEcho is the most bytes of a value sent by a client that [Echo] and
// [Quote] keep, so that an error message never grows with its input.
const MaxEcho = 64

// Echo returns v, a value that a client sent (a field, a number as it was
// written, a path segment), as an error message may show it: v itself if
// it has at most [MaxEcho] bytes, else its first MaxEcho bytes, cut at a
// character boundary, followed by "…". Every message of the kit that
// repeats a client's value goes through Echo or Quote: a 1 MB number in
// max_tokens gets a short 400, not a 1 MB one.
func Echo(v string) string {
	if len(v) <= MaxEcho {
		return v
	}
	n := MaxEcho
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n] + "…"
}

// Quote returns [Echo](v) double-quoted, with Go's escapes
// (strconv.Quote), as %q would print it.
func Quote(v string) string { return strconv.Quote(Echo(v)) }
