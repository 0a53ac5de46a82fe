package sse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"

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

// Read returns an iterator over the events of the SSE stream r, parsed by
// go-sse's reader, in order. Comment lines (keep-alives), id: and retry:
// fields, and lines that are not SSE fields are skipped; a UTF-8 byte order
// mark at the start is removed; LF, CR and CRLF all end a line. An event
// needs no data: line to be yielded (event: alone is enough), and an event
// that the end of the stream cuts off after a complete line is still
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
func Read(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for ev, err := range gosse.Read(r, &gosse.ReadConfig{MaxEventSize: MaxEventSize}) {
			if err != nil {
				yield(Event{}, readError(err))
				return
			}
			if !yield(Event{Type: ev.Type, Data: ev.Data}, nil) {
				return
			}
		}
	}
}

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
