package gateway

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
)

// statusRecorder remembers the status a handler wrote and the key id of
// the request's principal, for the access log. It unwraps for
// http.ResponseController, so streaming handlers can still flush.
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

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request: method, path, status, latency
// and, when authenticated, the key id (never the secret). A request whose
// client left before any reply has status 0.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("latency", time.Since(start)),
			slog.String("key_id", rec.keyID))
	})
}

// captureKey runs inside the auth middleware and hands the key id of the
// principal out to logRequests, which runs outside it, through the
// statusRecorder that the writer is or wraps. (A context value would cost
// a copy of the request.)
func captureKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rec := recorderOf(w); rec != nil {
			if p, ok := auth.PrincipalFrom(r.Context()); ok {
				rec.keyID = p.KeyID
			}
		}
		next.ServeHTTP(w, r)
	})
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
