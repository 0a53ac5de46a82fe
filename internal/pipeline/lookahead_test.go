package pipeline_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/passthrough"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/sse"
)

// intWriter is a DeltaWriter of ints that fails on fail.
type intWriter struct {
	got  []int
	fail int
}

func (w *intWriter) Detach(*int) {}
func (w *intWriter) Add(d *int) error {
	if *d == w.fail {
		return errors.New("add failed")
	}
	w.got = append(w.got, *d)
	return nil
}
func (w *intWriter) Finish() error             { return nil }
func (w *intWriter) End(*http.Request, error)  {}
func (w *intWriter) Used(int64) pipeline.Usage { return pipeline.Usage{} }

func newStream(t *testing.T) *sse.Stream {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	s, err := sse.Start(httptest.NewRecorder(), r)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func ints(n int, returned *bool) func(context.Context) iter.Seq2[int, error] {
	return func(ctx context.Context) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			defer func() { *returned = true }()
			for i := range n {
				if !yield(i, nil) {
					return
				}
			}
		}
	}
}

var paces = []struct {
	name string
	pace pipeline.Pace
}{
	{"ahead", pipeline.Ahead},
	{"at hand", pipeline.AtHand},
	{"paced", pipeline.Paced},
}

func TestWriteDeltasWritesEveryDeltaInOrder(t *testing.T) {
	t.Parallel()
	for _, tt := range paces {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var returned bool
			w := &intWriter{fail: -1}
			require.NoError(t, pipeline.WriteDeltas(t.Context(), newStream(t), tt.pace, ints(100, &returned), w))
			require.Len(t, w.got, 100)
			for i, d := range w.got {
				require.Equal(t, i, d)
			}
			require.True(t, returned, "the stream has ended")
		})
	}
}

func TestWriteDeltasStopsTheStreamWhenTheHandlerStops(t *testing.T) {
	t.Parallel()
	for _, tt := range paces {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var returned bool
			w := &intWriter{fail: 3}
			err := pipeline.WriteDeltas(t.Context(), newStream(t), tt.pace, ints(1000, &returned), w)
			require.EqualError(t, err, "add failed")
			require.Equal(t, []int{0, 1, 2}, w.got)
			require.True(t, returned, "the stream returned before WriteDeltas did")
		})
	}
}

// flushLog is a Flusher that counts its flushes by the deltas written
// before each.
type flushLog struct {
	w       *intWriter
	flushed []int // len(w.got) at each flush
}

func (f *flushLog) Flush() error {
	f.flushed = append(f.flushed, len(f.w.got))
	return nil
}

func TestWriteDeltasFlushesAPacedStreamWhenItWaits(t *testing.T) {
	t.Parallel()
	w := &intWriter{fail: -1}
	f := &flushLog{w: w}
	var waits []int
	reads := func(ctx context.Context) iter.Seq2[int, error] {
		wait := passthrough.WaitFunc(ctx)
		require.NotNil(t, wait, "a paced stream's context carries the flush")
		return func(yield func(int, error) bool) {
			// Three reads of an upstream: of 2, 1 and 3 events.
			n := 0
			for _, events := range []int{2, 1, 3} {
				waits = append(waits, len(w.got))
				wait()
				for range events {
					if !yield(n, nil) {
						return
					}
					n++
				}
			}
		}
	}
	require.NoError(t, pipeline.WriteDeltas(t.Context(), f, pipeline.Paced, reads, w))
	require.Equal(t, []int{0, 1, 2, 3, 4, 5}, w.got)
	require.Equal(t, []int{0, 2, 3}, f.flushed, "one flush before each read, with the events of the read before")
	require.Equal(t, f.flushed, waits)
}

func TestWriteDeltasGivesNoWaitToOtherPaces(t *testing.T) {
	t.Parallel()
	for _, pace := range []pipeline.Pace{pipeline.Ahead, pipeline.AtHand} {
		var wait func()
		deltas := func(ctx context.Context) iter.Seq2[int, error] {
			wait = passthrough.WaitFunc(ctx)
			return ints(1, new(bool))(ctx)
		}
		require.NoError(t, pipeline.WriteDeltas(t.Context(), newStream(t), pace, deltas, &intWriter{fail: -1}))
		require.Nil(t, wait, "pace %d", pace)
	}
}

func TestWriteDeltasRaisesAStreamsPanicInTheCaller(t *testing.T) {
	t.Parallel()
	panicking := func(context.Context) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			yield(1, nil)
			panic("backend bug")
		}
	}
	defer func() {
		v := recover()
		require.NotNil(t, v)
		require.Contains(t, v, "backend bug")
	}()
	_ = pipeline.WriteDeltas(t.Context(), newStream(t), pipeline.Ahead, panicking, &intWriter{fail: -1})
	t.Fatal("WriteDeltas returned")
}

// The backends of TestPaceOf: backend is the interface of a package's
// backends, streamer that of its streaming ones.
type (
	backend       interface{ Complete() }
	streamer      interface{ Stream() }
	plainBackend  struct{}
	streamBackend struct{}
	readerBackend struct{ streamBackend }
	router        struct{ picks backend }
)

func (plainBackend) Complete()            {}
func (streamBackend) Complete()           {}
func (streamBackend) Stream()             {}
func (readerBackend) ReadsUpstream()      {}
func (r router) Complete()                {}
func (r router) Stream()                  {}
func (r router) Pick(p *struct{}) backend { return r.picks }

var _ passthrough.Router[*struct{}, backend] = router{}

func TestPaceOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		b    backend
		want pipeline.Pace
	}{
		{"a backend that does not stream", plainBackend{}, pipeline.AtHand},
		{"a streaming backend", streamBackend{}, pipeline.Ahead},
		{"a relay's backend", readerBackend{}, pipeline.Paced},
		{"a router that picks a relay's backend", router{picks: readerBackend{}}, pipeline.Paced},
		{"a router that picks one that does not stream", router{picks: plainBackend{}}, pipeline.AtHand},
		{"a router that picks a streaming backend", router{picks: streamBackend{}}, pipeline.Ahead},
	} {
		require.Equal(t, tt.want, pipeline.PaceOf[streamer](tt.b, &struct{}{}), tt.name)
	}
}

func TestDetachCopiesWhatADeltaPointsTo(t *testing.T) {
	t.Parallel()
	var ring pipeline.DeltaRing[pipeline.Detached[int, string]]
	usage, list := 7, []string{"a", "b"}
	u, l := &usage, list
	pipeline.Detach(&ring, &u, &l)
	usage, list[0] = 8, "changed" // the backend reuses its memory
	require.Equal(t, 7, *u)
	require.Equal(t, []string{"a", "b"}, l)

	var none *int
	var empty []string
	pipeline.Detach(&ring, &none, &empty)
	require.Nil(t, none, "nothing to copy: the delta is left as it is")
	require.Nil(t, empty)
}
