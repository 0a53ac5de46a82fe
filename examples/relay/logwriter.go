package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logWriter buffers the log lines written to it and writes them to w
// every interval, when its buffer fills, and on Close: an access log that
// costs no system call per request, as a web server's buffered access log
// (nginx's buffer= and flush=, Envoy's file flush interval). A line
// reaches w at most interval after it is written; a process that crashes
// loses the lines of the last interval.
type logWriter struct {
	mu   sync.Mutex
	buf  *bufio.Writer
	err  error // the first write error; later writes are dropped
	once sync.Once
	stop chan struct{}
	done chan struct{}
}

// logBufferSize is the buffer of a logWriter: about a hundred access log
// lines.
const logBufferSize = 32 << 10

// newLogWriter returns a logWriter in front of w that writes out every
// interval (which must be positive).
func newLogWriter(w io.Writer, interval time.Duration) *logWriter {
	l := &logWriter{buf: bufio.NewWriterSize(w, logBufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go l.flushEvery(interval)
	return l
}

// Write buffers p, one log line (slog writes each record with one Write).
func (l *logWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.buf.Write(p)
	if err != nil {
		l.err = err
	}
	return n, err
}

// Flush writes out what is buffered.
func (l *logWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.buf.Flush()
	}
	return l.err
}

// Close stops the periodic writes and writes out what is buffered. Lines
// written after Close are buffered until the next Flush.
func (l *logWriter) Close() error {
	l.once.Do(func() {
		close(l.stop)
		<-l.done
	})
	return l.Flush()
}

func (l *logWriter) flushEvery(interval time.Duration) {
	defer close(l.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.Flush()
		}
	}
}
