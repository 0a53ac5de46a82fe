package gateway

import (
	"log/slog"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"
)

// statusRecorder remembers the status a handler wrote and the key id of
// the request, for the access log. It flushes (http.Flusher, and
// FlushError for go-sse and http.ResponseController) and unwraps, so
// streaming handlers write through it and their status is recorded.
type statusRecorder struct {
	http.ResponseWriter
	status int
	keyID  string
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// FlushError flushes the writer it wraps; a flush before any write sends
// the headers with status 200, as net/http does.
func (s *statusRecorder) FlushError() error {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return http.NewResponseController(s.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (s *statusRecorder) Flush() { _ = s.FlushError() }

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request: method, path, status, latency
// and the key id, when the credential named a known key (never the
// secret), also for requests that the auth middleware refused. A request
// whose client left before any reply has status 0.
//
// The line is handed to logger's handler as Logger.LogAttrs does, but
// with the program counter of this call site taken once rather than
// walked from the stack on every request (runtime.Callers was about 1.5%
// of the relay's CPU): a handler with AddSource sees the same function
// and file.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	var site atomic.Uintptr // the line's source, once known
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		ctx := r.Context()
		if !logger.Enabled(ctx, slog.LevelInfo) {
			return
		}
		pc := site.Load()
		if pc == 0 {
			var pcs [1]uintptr
			runtime.Callers(1, pcs[:]) // this function, as LogAttrs would record it
			pc = pcs[0]
			site.Store(pc)
		}
		line := slog.NewRecord(time.Now(), slog.LevelInfo, "request", pc)
		line.AddAttrs(slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("latency", time.Since(start)),
			slog.String("key_id", rec.keyID))
		_ = logger.Handler().Handle(ctx, line)
	})
}

// observeKey is the auth middleware's key observer: it hands the key id
// that the credential resolved to out to logRequests, which runs outside
// the middleware, through the statusRecorder that the writer is or
// wraps. (A context value would cost a copy of the request, and would not
// come back out of a refused one.)
func observeKey(w http.ResponseWriter, _ *http.Request, keyID string) {
	if rec := recorderOf(w); rec != nil {
		rec.keyID = keyID
	}
}

// recorderOf returns the statusRecorder that w is or wraps, or nil.
func recorderOf(w http.ResponseWriter) *statusRecorder {
	for {
		switch x := w.(type) {
		case *statusRecorder:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}
