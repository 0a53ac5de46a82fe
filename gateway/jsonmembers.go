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

// checkMembers returns an error for the first object member of the JSON
// text b that repeats an earlier member of the same object (which
// encoding/json would silently let win), naming it by its path, such as
// keys[0].quota, at the offset of its name. b must be valid JSON.
func checkMembers(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := walkMembers(dec, b, "", 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &posError{offset: dec.InputOffset(), err: errors.New("data after the top-level object")}
	}
	return nil
}

// walkMembers reads one value from dec, checking its objects.
func walkMembers(dec *json.Decoder, b []byte, path string, depth int) error {
	if depth > maxDepth {
		return &posError{offset: dec.InputOffset(), err: fmt.Errorf("%s: nested more than %d levels deep", orRoot(path), maxDepth)}
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := make(map[string]bool)
		for dec.More() {
			start := skipSpace(b, dec.InputOffset())
			tok, err := dec.Token()
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
			if err := walkMembers(dec, b, member, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := walkMembers(dec, b, path+"["+strconv.Itoa(i)+"]", depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token() // ']'
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
// that is neither white space nor the comma between members.
func skipSpace(b []byte, off int64) int64 {
	for off < int64(len(b)) {
		switch b[off] {
		case ' ', '\t', '\r', '\n', ',':
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
