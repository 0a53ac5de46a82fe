package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// maxDepth bounds the nesting that checkMembers walks: a configuration
// file needs a handful of levels, and the walk must not recurse without
// bound on hostile input.
const maxDepth = 64

// posError is an error at a byte offset of a file, which LoadFile turns
// into a line and column.
type posError struct {
	offset int64
	err    error
}

func (e *posError) Error() string { return e.err.Error() }
func (e *posError) Unwrap() error { return e.err }

// A valueCheck checks the string value of a member, by the member's
// name, so that an error can name the member and its position (which
// encoding/json does not give for a TextUnmarshaler's error). A member
// with a check must be a string or null.
type valueCheck func(s string) error

// checkMembers returns an error for the first object member of the JSON
// text b that repeats an earlier member of the same object (which
// encoding/json would silently let win), naming it by its path, such as
// keys[0].quota, at the offset of its name; or for the first string
// value that fails the check that checks (if not nil) returns for its
// member's name, at the offset of the value. b must be valid JSON.
func checkMembers(b []byte, checks func(name string) valueCheck) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	w := walker{dec: dec, b: b, checks: checks}
	if err := w.walk("", 0, nil); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &posError{offset: dec.InputOffset(), err: errors.New("data after the top-level object")}
	}
	return nil
}

type walker struct {
	dec    *json.Decoder
	b      []byte
	checks func(name string) valueCheck // nil: none
}

// walk reads one value, at path, checking its objects, and a string
// with check if it is not nil.
func (w *walker) walk(path string, depth int, check valueCheck) error {
	if depth > maxDepth {
		return &posError{offset: w.dec.InputOffset(), err: fmt.Errorf("%s: nested more than %d levels deep", orRoot(path), maxDepth)}
	}
	start := skipSpace(w.b, w.dec.InputOffset())
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	if _, ok := tok.(string); check != nil && !ok && tok != nil {
		return &posError{offset: start, err: fmt.Errorf("%s: want a string (or null)", path)}
	}
	switch tok := tok.(type) {
	case string:
		if check != nil {
			if err := check(tok); err != nil {
				return &posError{offset: start, err: fmt.Errorf("%s: %w", path, err)}
			}
		}
	case json.Delim:
		if tok == '[' {
			for i := 0; w.dec.More(); i++ {
				if err := w.walk(path+"["+strconv.Itoa(i)+"]", depth+1, nil); err != nil {
					return err
				}
			}
			_, err = w.dec.Token() // ']'
			return err
		}
		seen := make(map[string]bool)
		for w.dec.More() {
			start := skipSpace(w.b, w.dec.InputOffset())
			tok, err := w.dec.Token()
			if err != nil {
				return err
			}
			name, _ := tok.(string)
			member := name
			if path != "" {
				member = path + "." + name
			}
			if seen[name] {
				return &posError{offset: start, err: fmt.Errorf("%s: given twice in the same object; the file must say it once", member)}
			}
			seen[name] = true
			var check valueCheck
			if w.checks != nil {
				check = w.checks(name)
			}
			if err := w.walk(member, depth+1, check); err != nil {
				return err
			}
		}
		_, err = w.dec.Token() // '}'
		return err
	}
	return nil
}

func orRoot(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

// skipSpace returns the offset of the first byte of b at or after off
// that is neither white space nor the comma or colon between tokens.
func skipSpace(b []byte, off int64) int64 {
	for off < int64(len(b)) {
		switch b[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// position returns the 1-based line and column (in bytes) of offset off
// of b.
func position(b []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(b)))
	before := b[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
