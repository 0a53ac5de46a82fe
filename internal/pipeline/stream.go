package pipeline

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/sse"
)

// A Flusher sends what a stream's writer has written: an *sse.Stream, or
// the writer of a stream of another framing (package gemini's).
type Flusher interface {
	Flush() error
}

var _ Flusher = (*sse.Stream)(nil)

// WriteDeltas writes the deltas of a backend's stream, deltas(ctx,
// flush), to s (an *sse.Stream, or another [Flusher]) with dw.Add, which
// writes without flushing, and flushes them as the stream's pace says.
// flush is the function that the stream's Params call in their Flush.
//
// The stream runs in the caller's goroutine (the iterator of a range
// loop runs on the goroutine that ranges over it), and each delta is
// written before the iterator runs on: the iterator may reuse what a
// delta points to once yield returns, and nothing is copied or handed
// over. When it flushes:
//
//   - A stream that never calls flush is flushed after every delta: the
//     next one may take a while (a backend that computes them), and none
//     is held back.
//   - Once a stream has called flush, it is flushed only when it calls
//     flush again, and at its end (by the caller's end of the stream). A
//     stream calls flush before it waits for its source (a relay before
//     each read of its upstream's reply, the demo before each pause): the
//     deltas of one read leave in one write, and none waits for the next
//     read. A stream that has all of its deltas at hand (a backend that
//     does not stream) calls it once, first, and goes out in one write.
//
// A flush with nothing written since the last one does nothing (both
// Flushers do nothing then). A failed flush ends the stream at its next
// delta, or at its end.
//
// WriteDeltas returns the first error of the backend, of dw.Add or of a
// flush; the caller ends the stream. When it stops before the stream's
// end, it cancels the stream's context, and the stream's yield returns
// false. A panic of the stream is a panic of the caller's goroutine.
func WriteDeltas[D any](ctx context.Context, s Flusher, deltas func(ctx context.Context, flush func()) iter.Seq2[D, error], dw DeltaWriter[D]) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	paced := false
	var flushed error // the first error of a flush the stream asked for
	flush := func() {
		paced = true
		if flushed == nil {
			flushed = s.Flush()
		}
	}
	// One variable for every delta: &d escapes into Add, and a variable
	// of the loop would be allocated for each delta.
	var d D
	for delta, err := range deltas(ctx, flush) {
		if err == nil {
			err = flushed
		}
		if err == nil {
			d = delta
			err = dw.Add(&d)
		}
		if err == nil && !paced {
			err = s.Flush()
		}
		if err != nil {
			cancel()
			return err
		}
	}
	return flushed
}
