package pipeline_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

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

func ints(n int, returned *bool) func(context.Context) (iter.Seq2[int, error], bool) {
	return func(ctx context.Context) (iter.Seq2[int, error], bool) {
		return func(yield func(int, error) bool) {
			defer func() { *returned = true }()
			for i := range n {
				if !yield(i, nil) {
					return
				}
			}
		}, false
	}
}

func TestWriteDeltasWritesEveryDeltaInOrder(t *testing.T) {
	t.Parallel()
	var returned bool
	w := &intWriter{fail: -1}
	require.NoError(t, pipeline.WriteDeltas(t.Context(), newStream(t), ints(100, &returned), w))
	require.Len(t, w.got, 100)
	for i, d := range w.got {
		require.Equal(t, i, d)
	}
	require.True(t, returned, "the stream's goroutine has ended")
}

func TestWriteDeltasStopsTheStreamWhenTheHandlerStops(t *testing.T) {
	t.Parallel()
	var returned bool
	w := &intWriter{fail: 3}
	err := pipeline.WriteDeltas(t.Context(), newStream(t), ints(1000, &returned), w)
	require.EqualError(t, err, "add failed")
	require.Equal(t, []int{0, 1, 2}, w.got)
	require.True(t, returned, "the stream returned before WriteDeltas did")
}

func TestWriteDeltasRaisesAStreamsPanicInTheCaller(t *testing.T) {
	t.Parallel()
	panicking := func(context.Context) (iter.Seq2[int, error], bool) {
		return func(yield func(int, error) bool) {
			yield(1, nil)
			panic("backend bug")
		}, false
	}
	defer func() {
		v := recover()
		require.NotNil(t, v)
		require.Contains(t, v, "backend bug")
	}()
	_ = pipeline.WriteDeltas(t.Context(), newStream(t), panicking, &intWriter{fail: -1})
	t.Fatal("WriteDeltas returned")
}
