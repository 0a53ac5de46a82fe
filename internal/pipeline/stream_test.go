package pipeline_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// writer is a DeltaWriter of []byte deltas that keeps a copy of each and
// fails on the delta fail.
type writer struct {
	got  []string
	fail string
}

func (w *writer) Add(d *[]byte) error {
	if string(*d) == w.fail {
		return errors.New("add failed")
	}
	w.got = append(w.got, string(*d))
	return nil
}
func (w *writer) Finish() error             { return nil }
func (w *writer) End(*http.Request, error)  {}
func (w *writer) Used(int64) pipeline.Usage { return pipeline.Usage{} }

// flushLog is a Flusher that records, at each flush, the deltas written
// before it.
type flushLog struct {
	w       *writer
	flushed []int // len(w.got) at each flush
	err     error // returned by every flush
}

func (f *flushLog) Flush() error {
	f.flushed = append(f.flushed, len(f.w.got))
	return f.err
}

// stream is a backend's stream for WriteDeltas: it yields the deltas of
// each read in reads, calling flush before each read when paced, and
// reuses one buffer for every delta, as a backend may. It records in
// ctxDone whether its context was done when it returned.
type stream struct {
	reads   [][]string
	paced   bool
	ctxDone bool
	flushes []int // deltas yielded at each call of flush
}

func (s *stream) deltas(ctx context.Context, flush func()) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		defer func() { s.ctxDone = ctx.Err() != nil }()
		var buf []byte
		n := 0
		for _, read := range s.reads {
			if s.paced {
				s.flushes = append(s.flushes, n)
				flush()
			}
			for _, d := range read {
				buf = append(buf[:0], d...)
				if !yield(buf, nil) {
					return
				}
				n++
			}
		}
	}
}

func TestWriteDeltas(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		reads       [][]string
		paced       bool
		fail        string
		flushErr    error
		wantErr     string
		wantGot     []string
		wantFlushed []int
		wantCtxDone bool
	}{{
		name:        "a stream that never calls flush is flushed after every delta",
		reads:       [][]string{{"a", "b"}, {"c"}},
		wantGot:     []string{"a", "b", "c"},
		wantFlushed: []int{1, 2, 3},
	}, {
		name:        "a stream that calls flush is flushed only then: what it yielded between two calls leaves in one write",
		reads:       [][]string{{"a", "b"}, {"c"}, {"d", "e", "f"}},
		paced:       true,
		wantGot:     []string{"a", "b", "c", "d", "e", "f"},
		wantFlushed: []int{0, 2, 3},
	}, {
		name:        "a failed Add stops the stream, whose context is cancelled",
		reads:       [][]string{{"a", "b", "c", "d"}},
		fail:        "c",
		wantErr:     "add failed",
		wantGot:     []string{"a", "b"},
		wantFlushed: []int{1, 2},
		wantCtxDone: true,
	}, {
		name:        "a failed flush stops the stream",
		reads:       [][]string{{"a", "b"}},
		flushErr:    errors.New("flush failed"),
		wantErr:     "flush failed",
		wantGot:     []string{"a"},
		wantFlushed: []int{1},
		wantCtxDone: true,
	}, {
		name:        "a failed flush that a paced stream asked for stops it at its next delta",
		reads:       [][]string{{"a", "b"}, {"c"}},
		paced:       true,
		flushErr:    errors.New("flush failed"),
		wantErr:     "flush failed",
		wantFlushed: []int{0},
		wantCtxDone: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := &writer{fail: tc.fail}
			f := &flushLog{w: w, err: tc.flushErr}
			s := &stream{reads: tc.reads, paced: tc.paced}
			err := pipeline.WriteDeltas(t.Context(), f, s.deltas, w)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, tc.wantGot, w.got, "every delta was written before the stream reused its buffer")
			require.Equal(t, tc.wantFlushed, f.flushed)
			if tc.paced {
				require.Equal(t, f.flushed, s.flushes, "each flush came when the stream called it")
			}
			require.Equal(t, tc.wantCtxDone, s.ctxDone, "the stream's context is cancelled when the writer stops first")
		})
	}
}

func TestWriteDeltasReturnsTheStreamsError(t *testing.T) {
	t.Parallel()
	w := &writer{}
	f := &flushLog{w: w}
	failing := func(context.Context, func()) iter.Seq2[[]byte, error] {
		return func(yield func([]byte, error) bool) {
			if yield([]byte("a"), nil) {
				yield(nil, errors.New("backend failed"))
			}
		}
	}
	require.EqualError(t, pipeline.WriteDeltas(t.Context(), f, failing, w), "backend failed")
	require.Equal(t, []string{"a"}, w.got)
}

// TestWriteDeltasLeavesAStreamsPanicToTheCaller checks that a backend's
// panic is one of the caller's goroutine, which net/http recovers from
// as from any handler's.
func TestWriteDeltasLeavesAStreamsPanicToTheCaller(t *testing.T) {
	t.Parallel()
	panicking := func(context.Context, func()) iter.Seq2[[]byte, error] {
		return func(yield func([]byte, error) bool) {
			yield([]byte("a"), nil)
			panic("backend bug")
		}
	}
	w := &writer{}
	require.PanicsWithValue(t, "backend bug", func() {
		_ = pipeline.WriteDeltas(t.Context(), &flushLog{w: w}, panicking, w)
	})
	require.Equal(t, []string{"a"}, w.got)
}
