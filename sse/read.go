package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"

	gosse "github.com/tmaxmax/go-sse"
)

// MaxEventSize is the largest event that [Read] accepts: 32 MiB of wire
// text, field names and line breaks included.
const MaxEventSize = 32 << 20

// ErrEventTooLong is returned (wrapped) by [Read] for an event longer than
// [MaxEventSize].
var ErrEventTooLong = errors.New("sse: event too long")

// An Event is one event read from a stream.
type Event struct {
	// Type is the value of the event's "event:" field, or "" if it has
	// none. Responses streams name their events; chat completions and
	// completions streams do not.
	Type string
	// Data is the event's data: its data: lines joined with "\n".
	Data string
}

// IsDone reports whether e is the "data: [DONE]" sentinel that ends chat
// completions and completions streams.
func (e Event) IsDone() bool {
	return e.Data == DoneData
}

// Read returns an iterator over the events of the SSE stream r, read as
// go-sse's reader reads them, event for event and error for error
// (FuzzReadLikeGoSSE checks it against go-sse on arbitrary streams cut
// into arbitrary reads). Comment lines (keep-alives), id: and retry:
// fields, and lines that are not SSE fields are skipped; a UTF-8 byte
// order mark at the start is removed; LF, CR and CRLF all end a line. An
// event needs no data: line to be yielded (event: alone is enough), and an
// event that the end of the stream cuts off after a complete line is still
// yielded.
//
// Iteration ends at the end of r, with no error, or at the first error,
// yielded once with a zero Event: an event longer than [MaxEventSize]
// (wrapping [ErrEventTooLong]), a stream that ends in the middle of a line
// (wrapping [io.ErrUnexpectedEOF]), or r's own error. Read never panics on
// malformed input. Breaking out of the loop stops reading; Read does not
// close r.
//
// Read does not treat the [DONE] sentinel specially: it is an event like
// any other, recognised with [Event.IsDone].
//
// It is go-sse's parser (the same bufio.Scanner, split into events by the
// same rule) without its copies: each event costs one string for its
// data, and none for a type equal to the previous event's.
func Read(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Split(splitEvents)
		buf := scanBuffers.Get().(*[]byte)
		defer scanBuffers.Put(buf) // no Event shares it: their data are copies
		sc.Buffer(*buf, MaxEventSize)
		var (
			data  []byte // the event's data: lines, each followed by "\n"
			typ   string // the event's type
			last  string // the last type read, reused when the next is the same
			dirty bool   // a field of the event has been read
			first = true // the first event block, whose BOM is dropped
		)
		emit := func() bool {
			d := data
			if len(d) > 0 {
				d = d[:len(d)-1]
			}
			ev := Event{Type: typ, Data: string(d)}
			data, typ, dirty = data[:0], "", false
			return yield(ev, nil)
		}
		for sc.Scan() {
			block := sc.Bytes()
			if first {
				block = bytes.TrimPrefix(block, []byte(bom))
				first = false
			}
			for len(block) > 0 {
				i, _ := newlineIndex(block)
				if i == len(block) {
					yield(Event{}, readError(gosse.ErrUnexpectedEOF))
					return
				}
				line := block[:i]
				if block[i] == '\r' && i+1 < len(block) && block[i+1] == '\n' {
					i++
				}
				block = block[i+1:]
				if len(line) == 0 {
					if dirty && !emit() {
						return
					}
					continue
				}
				name, value := line, line[len(line):]
				if c := bytes.IndexByte(line, ':'); c > maxFieldName {
					continue
				} else if c >= 0 {
					name, value = line[:c], line[c+1:]
					if len(value) > 0 && value[0] == ' ' {
						value = value[1:]
					}
				}
				switch string(name) {
				case "data":
					data = append(append(data, value...), '\n')
					dirty = true
				case "event":
					if string(value) != last {
						last = string(value)
					}
					typ, dirty = last, true
				case "id":
					// The last event id is not reported; an id with a NUL
					// is ignored, as the standard says.
					dirty = dirty || bytes.IndexByte(value, 0) < 0
				}
				// retry: is ignored, as go-sse's Read ignores it.
			}
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, readError(err))
			return
		}
		if dirty {
			emit()
		}
	}
}

// scanBuffers holds the first buffers of Read's scanners (which grow
// their own beyond it, up to MaxEventSize): most streams' events fit.
var scanBuffers = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

// bom is the UTF-8 byte order mark.
const bom = "\xEF\xBB\xBF"

// maxFieldName is the length of the longest field name, "retry" and
// "event": a colon further on makes the line no field.
const maxFieldName = 5

// splitEvents is go-sse's split function (internal/parser.splitFunc): a
// token is one event block, from its first line (blank lines before it
// skipped) to the blank line that ends it, that line included; at the
// end of the input, whatever is left.
func splitEvents(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if len(data) == 0 {
		return 0, nil, nil
	}
	var start int
	for {
		index, endlineLen := newlineIndex(data[advance:])
		advance += index + endlineLen
		if index == 0 {
			start += endlineLen
		}
		if advance == len(data) || (isNewline(data[advance]) && index > 0) {
			break
		}
	}
	if l := len(data); advance == l && !atEOF {
		return 0, nil, nil
	} else if advance < l {
		advance++
		if advance < l && data[advance-1] == '\r' && data[advance] == '\n' {
			advance++
		}
	}
	return advance, data[start:advance], nil
}

// newlineIndex returns the index of the first line break in s, and its
// length (2 for CRLF; 0 when there is none, index being len(s)). It
// looks for LF, then for a CR before it, with bytes.IndexByte: an event
// line is mostly a long data field, which that scans many bytes at a time.
func newlineIndex(s []byte) (index, length int) {
	index = bytes.IndexByte(s, '\n')
	if index < 0 {
		index = len(s)
	}
	if cr := bytes.IndexByte(s[:index], '\r'); cr >= 0 {
		if cr+1 < len(s) && s[cr+1] == '\n' {
			return cr, 2
		}
		return cr, 1
	}
	if index == len(s) {
		return index, 0
	}
	return index, 1
}

func isNewline(b byte) bool { return b == '\n' || b == '\r' }

func readError(err error) error {
	switch {
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%w: longer than %d bytes", ErrEventTooLong, MaxEventSize)
	case errors.Is(err, gosse.ErrUnexpectedEOF):
		return fmt.Errorf("sse: stream ended in the middle of a line: %w", io.ErrUnexpectedEOF)
	default:
		return fmt.Errorf("sse: read: %w", err)
	}
}
