package pipeline

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/gatewaykit/gatewaykit/internal/passthrough"
	"github.com/gatewaykit/gatewaykit/sse"
)

// A Flusher sends what a stream's writer has written: an *sse.Stream, or
// the writer of a stream of another framing (package gemini's).
type Flusher interface {
	Flush() error
}

var _ Flusher = (*sse.Stream)(nil)

// Lookahead is the number of deltas that a backend's stream may run
// ahead of the client's: [WriteDeltas] holds up to that many deltas that
// the backend yielded and that the handler has not written yet. A
// [DeltaWriter]'s Detach keeps Lookahead+2 deltas apart (see
// [DeltaRing]).
const Lookahead = 16

// A Pace says how [WriteDeltas] runs a backend's stream, and when it
// flushes.
type Pace int

const (
	// Ahead runs the stream in a goroutine of its own, a few deltas
	// ahead of the client, and flushes after a delta whose successor is
	// not at hand yet: a backend's stream, which may compute its deltas.
	Ahead Pace = iota
	// AtHand runs the stream in the handler's goroutine and flushes only
	// at the end: the whole reply is at hand at once (a backend that
	// does not stream).
	AtHand
	// Paced runs the stream in the handler's goroutine, and flushes when
	// the stream says that it is about to wait, through the function of
	// passthrough.WaitFunc: a relay's upstream stream, whose events come
	// in reads of the upstream's reply.
	Paced
)

// PaceOf returns the Pace of the stream of the backend that answers p:
// b, or the one that b picks if it is a passthrough.Router. The stream
// of a passthrough.Reader (a relay's backend) is [Paced]; that of a
// backend that streams (S is the interface of streaming backends of b's
// package) runs [Ahead]; the reply of one that does not is all
// [AtHand].
func PaceOf[S, B, P any](b B, p P) Pace {
	switch any(passthrough.Pick(b, p)).(type) {
	case passthrough.Reader:
		return Paced
	case S:
		return Ahead
	}
	return AtHand
}

// WriteDeltas writes the deltas of a backend's stream, deltas(ctx), to s
// (an *sse.Stream, or another [Flusher]) with dw.Add, which writes
// without flushing, and flushes as pace says:
//
//   - [Ahead]: it runs the stream in a goroutine of its own, which hands
//     the deltas over a channel of [Lookahead] after dw.Detach has made
//     each one the handler's own (the iterator may reuse what a delta
//     points to once yield returns), and flushes after a delta whose
//     successor is not already at hand. So a burst of deltas costs one
//     write to the client, and a delta that came alone goes out before
//     the handler waits for the next; a reply that is all at hand goes
//     out in one flush, with the end of the stream. The first delta is
//     always flushed at once, and handed over before the stream's
//     goroutine runs on (time to first token).
//   - [AtHand]: the deltas are written in the caller's goroutine, and
//     none is flushed (the end of the stream flushes them all).
//   - [Paced]: the deltas are written in the caller's goroutine, and s
//     is flushed whenever the stream calls the function that
//     passthrough.WaitFunc finds in its context, before it waits: the
//     events of one read of an upstream go out in one write, and none
//     waits for the next read. No goroutine, channel or copy of a delta
//     is needed: each delta is written before the stream runs on. A
//     failed flush is seen at the next write (an *sse.Stream's errors
//     stay).
//
// It returns the first error of the backend, of dw.Add or of a flush; the
// caller ends the stream. Before it returns, the stream has ended: its
// context is cancelled if the handler stopped first, and its yield
// returns false. A panic of an [Ahead] stream is raised again in the
// caller's goroutine.
func WriteDeltas[D any](ctx context.Context, s Flusher, pace Pace, deltas func(context.Context) iter.Seq2[D, error], dw DeltaWriter[D]) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	switch pace {
	case AtHand:
		return writeAll(deltas(ctx), dw)
	case Paced:
		return writeAll(deltas(passthrough.WithWait(ctx, func() { _ = s.Flush() })), dw)
	}
	la := &lookahead[D]{ch: make(chan handed[D], Lookahead), quit: make(chan struct{}), wake: make(chan struct{}, 1), done: make(chan struct{})}
	go la.run(deltas(ctx), dw.Detach)
	defer func() {
		la.stopped.Store(true)
		close(la.quit)
		cancel()
		<-la.done
		if la.panicked != nil {
			panic(la.panicked)
		}
	}()
	// One variable for every delta: &d escapes into Add, and a variable
	// of the loop would be allocated for each delta.
	var d D
	first := true
	h, ok := <-la.ch
	for ok {
		if h.err != nil {
			return h.err
		}
		d = h.d
		la.taken()
		if err := dw.Add(&d); err != nil {
			return err
		}
		// The first delta always goes out at once (time to first token).
		// After it, only the stream's goroutine sends, so a delta counted
		// now is there to receive: a plain length check per delta, and a
		// select only to see whether the stream has ended.
		if !first {
			if len(la.ch) > 0 {
				h, ok = <-la.ch
				continue
			}
			select {
			case h, ok = <-la.ch:
				continue // the next delta, or the end, is at hand
			default:
			}
		}
		first = false
		if err := s.Flush(); err != nil {
			return err
		}
		h, ok = <-la.ch
	}
	return nil
}

// writeAll writes the deltas of seq without flushing them.
func writeAll[D any](seq iter.Seq2[D, error], dw DeltaWriter[D]) error {
	var d D
	for delta, err := range seq {
		if err != nil {
			return err
		}
		d = delta
		if err := dw.Add(&d); err != nil {
			return err
		}
	}
	return nil
}

// taken wakes the stream's goroutine if it waits for room and half of
// the channel is free.
func (la *lookahead[D]) taken() {
	if la.waiting.Load() && len(la.ch) <= cap(la.ch)/2 {
		select {
		case la.wake <- struct{}{}:
		default:
		}
	}
}

// handed is a delta, or the error of the stream, as handed over.
type handed[D any] struct {
	d   D
	err error
}

// lookahead is the goroutine of WriteDeltas that runs a stream.
type lookahead[D any] struct {
	ch       chan handed[D] // closed when the stream has ended
	quit     chan struct{}  // closed when the handler stops
	stopped  atomic.Bool    // set before quit is closed
	wake     chan struct{}  // a token: the handler took half of a full channel
	waiting  atomic.Bool    // the goroutine waits for wake
	done     chan struct{}  // closed when the goroutine ends
	panicked any            // the stream's panic, set before done is closed
}

func (la *lookahead[D]) run(seq iter.Seq2[D, error], detach func(*D)) {
	defer close(la.done)
	defer close(la.ch)
	defer func() {
		if v := recover(); v != nil {
			la.panicked = fmt.Sprintf("%v [in a backend's stream]\n%s", v, debug.Stack())
		}
	}()
	first := true
	// One variable for every delta: &d escapes into detach, and a
	// variable of the loop would be allocated for each delta.
	var d D
	for delta, err := range seq {
		if la.stopped.Load() {
			return
		}
		d = delta
		if err == nil {
			detach(&d)
		}
		// When the channel is full, wait until the handler has taken half
		// of it, rather than be woken for each delta it takes. Only this
		// goroutine sends, so there is room then: a plain send.
		for len(la.ch) == cap(la.ch) {
			la.waiting.Store(true)
			if len(la.ch) == cap(la.ch) {
				select {
				case <-la.wake:
				case <-la.quit:
					return
				}
			}
			la.waiting.Store(false)
		}
		la.ch <- handed[D]{d: d, err: err}
		if err != nil {
			return
		}
		if first {
			// Let the handler write the first delta before this
			// goroutine runs on (the stream may have more at hand).
			first = false
			runtime.Gosched()
		}
	}
}

// DeltaRing keeps the deltas handed over by [WriteDeltas] apart: a
// DeltaWriter's Detach copies what a delta points to into the next of
// its slots, which the handler reads after the delta is handed over. The
// stream's goroutine is at most Lookahead+1 deltas ahead of the one the
// handler is writing, so Lookahead+2 slots are never reused too soon.
type DeltaRing[S any] struct {
	slots [Lookahead + 2]S
	next  int
}

// Next returns the next slot; only the stream's goroutine calls it.
func (r *DeltaRing[S]) Next() *S {
	s := &r.slots[r.next]
	r.next++
	if r.next == len(r.slots) {
		r.next = 0
	}
	return s
}

// Detached is what [Detach] copies of a delta: its usage U and its list
// of E (tool calls, say).
type Detached[U, E any] struct {
	usage U
	list  []E
}

// Detach copies *usage and *list, when set, into the next slot of r and
// points them there: the Detach of a DeltaWriter whose deltas point to
// nothing else (the chat deltas of the messages and Gemini-style
// handlers).
func Detach[U, E any](r *DeltaRing[Detached[U, E]], usage **U, list *[]E) {
	if *usage == nil && len(*list) == 0 {
		return
	}
	sl := r.Next()
	if *usage != nil {
		sl.usage = **usage
		*usage = &sl.usage
	}
	if len(*list) > 0 {
		sl.list = append(sl.list[:0], *list...)
		*list = sl.list
	}
}
