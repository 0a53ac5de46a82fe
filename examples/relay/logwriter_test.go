package main

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is the log's destination, read while the writer flushes.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.b.Write(p)
}

func (b *lockedBuffer) String() (string, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String(), b.writes
}

func TestLogWriterWritesOutEveryInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		l := newLogWriter(&out, 100*time.Millisecond)
		for _, line := range []string{"a=1\n", "b=2\n", "c=3\n"} {
			_, err := l.Write([]byte(line))
			require.NoError(t, err)
		}
		got, writes := out.String()
		require.Empty(t, got, "nothing is written before the interval")
		require.Zero(t, writes)

		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		got, writes = out.String()
		require.Equal(t, "a=1\nb=2\nc=3\n", got)
		require.Equal(t, 1, writes, "the lines of one interval go out in one write")

		_, err := l.Write([]byte("d=4\n"))
		require.NoError(t, err)
		require.NoError(t, l.Close())
		got, _ = out.String()
		require.Equal(t, "a=1\nb=2\nc=3\nd=4\n", got, "Close writes out the rest")
		require.NoError(t, l.Close(), "a second Close is harmless")
	})
}

func TestLogWriterWritesOutAFullBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out lockedBuffer
		l := newLogWriter(&out, time.Hour)
		defer l.Close()
		line := strings.Repeat("x", 999) + "\n"
		for range logBufferSize/len(line) + 1 {
			_, err := l.Write([]byte(line))
			require.NoError(t, err)
		}
		got, _ := out.String()
		require.NotEmpty(t, got, "a full buffer is written out without waiting")
	})
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestLogWriterKeepsTheFirstError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLogWriter(failingWriter{}, time.Hour)
		_, err := l.Write([]byte("a=1\n"))
		require.NoError(t, err, "buffered")
		require.ErrorIs(t, l.Flush(), errDiskFull)
		_, err = l.Write([]byte("b=2\n"))
		require.ErrorIs(t, err, errDiskFull, "later lines are dropped")
		require.ErrorIs(t, l.Close(), errDiskFull)
	})
}
