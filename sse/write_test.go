package sse_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/sse"
)

// countingRecorder is a ResponseRecorder that counts the Writes and
// Flushes that reach it.
type countingRecorder struct {
	*httptest.ResponseRecorder
	writes, flushes int
}

func newCountingRecorder() *countingRecorder {
	return &countingRecorder{ResponseRecorder: httptest.NewRecorder()}
}

func (c *countingRecorder) Write(p []byte) (int, error) {
	c.writes++
	return c.ResponseRecorder.Write(p)
}

func (c *countingRecorder) Flush() {
	c.flushes++
	c.ResponseRecorder.Flush()
}

func TestWriteRawWaitsForFlush(t *testing.T) {
	t.Parallel()
	rec := newCountingRecorder()
	s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(0))
	require.NoError(t, err)
	defer s.Close()

	require.NoError(t, s.Flush(), "nothing pending")
	require.Zero(t, rec.flushes)
	for _, data := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		require.NoError(t, s.WriteRaw("", []byte(data)))
	}
	require.True(t, s.Started())
	require.Equal(t, 3, rec.writes, "one write per event, into net/http's buffers")
	require.Zero(t, rec.flushes, "unflushed events wait for a flush")

	require.NoError(t, s.Flush())
	require.Equal(t, 1, rec.flushes, "one flush for the whole burst")
	require.NoError(t, s.Flush(), "nothing pending")
	require.Equal(t, 1, rec.flushes)

	require.NoError(t, s.WriteRaw("named", []byte(`{"n":4}`)))
	require.NoError(t, s.SendRaw("", []byte(`{"n":5}`)), "a Send flushes what is pending with its own event")
	require.Equal(t, 2, rec.flushes)

	require.NoError(t, s.WriteRaw("", []byte(`{"n":6}`)))
	require.NoError(t, s.Done())
	require.Equal(t, 3, rec.flushes)
	require.Equal(t, 7, rec.writes)

	got, err := collect(rec.Body)
	require.NoError(t, err)
	require.Equal(t, []sse.Event{
		{Data: `{"n":1}`}, {Data: `{"n":2}`}, {Data: `{"n":3}`},
		{Type: "named", Data: `{"n":4}`}, {Data: `{"n":5}`}, {Data: `{"n":6}`},
		{Data: sse.DoneData},
	}, got)
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
}

func TestCloseFlushesPendingEvents(t *testing.T) {
	t.Parallel()
	rec := newCountingRecorder()
	s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(0))
	require.NoError(t, err)
	require.NoError(t, s.WriteRaw("", []byte(`{"n":1}`)))
	s.Close()
	require.Equal(t, 1, rec.flushes)
	got, err := collect(rec.Body)
	require.NoError(t, err)
	require.Equal(t, []sse.Event{{Data: `{"n":1}`}}, got)

	require.ErrorIs(t, s.WriteRaw("", []byte(`{"n":2}`)), sse.ErrClosed)
	require.ErrorIs(t, s.Flush(), sse.ErrClosed)
	s.Close()
	require.Equal(t, 1, rec.flushes, "nothing is written after Close")
}

func TestErrorFlushesPendingEventsFirst(t *testing.T) {
	t.Parallel()
	rec := newCountingRecorder()
	s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(0))
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.WriteRaw("", []byte(`{"n":1}`)))
	require.NoError(t, s.Error(apierrors.BadGateway("upstream failed", nil)))
	require.Equal(t, http.StatusOK, rec.Code, "the pending event started the stream")
	got, err := collect(rec.Body)
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.Equal(t, `{"n":1}`, got[0].Data)
	require.Contains(t, got[1].Data, `"message":"upstream failed"`)
}

func TestCanceledRequestStopsWriteRaw(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	rec := newCountingRecorder()
	s, err := sse.Start(rec, newRequest().WithContext(ctx), sse.WithKeepAlive(0))
	require.NoError(t, err)
	require.NoError(t, s.WriteRaw("", []byte(`{"n":1}`)))
	cancel()
	require.ErrorIs(t, s.Flush(), context.Canceled)
	require.ErrorIs(t, s.WriteRaw("", []byte(`{"n":2}`)), context.Canceled)
	s.Close()
	require.Equal(t, 1, rec.writes)
	require.Zero(t, rec.flushes, "nothing is flushed for a client that has gone")
}

// TestKeepAliveFlushesPendingEvents checks that an event left unflushed
// reaches the client within the keep-alive interval, and that comments
// still bridge the silence afterwards.
func TestKeepAliveFlushesPendingEvents(t *testing.T) {
	t.Parallel()
	srv, client := serve(t, func(w http.ResponseWriter, r *http.Request) {
		s, err := sse.Start(w, r, sse.WithKeepAlive(5*time.Millisecond))
		if err != nil {
			apierrors.Write(w, r, err)
			return
		}
		defer s.Close()
		if s.WriteRaw("", []byte(`{"n":1}`)) != nil {
			return
		}
		<-r.Context().Done() // a producer that never flushes
	}, false)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a bound, not an assertion
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	require.NoError(t, err)
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()

	// The handler never flushes: only the keep-alive timer can send the
	// event. (A comment may come first, if a tick came before WriteRaw.)
	br := bufio.NewReader(res.Body)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err, "the stream ended before the pending event")
		if line == "data: {\"n\":1}\n" {
			break
		}
		require.Contains(t, []string{": keep-alive\n", "\n"}, line)
	}
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "\n", line)
	line, err = br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": keep-alive\n", line, "the idle stream still gets comments")
}
