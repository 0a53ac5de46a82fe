package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
)

// statusRecorder remembers the status a handler wrote. It unwraps for
// http.ResponseController, so streaming handlers can still flush.
type statusRecorder struct {
	http.ResponseWriter
	status int
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
		var keyID string
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), keyCaptureKey{}, &keyID)))
		logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("latency", time.Since(start)),
			slog.String("key_id", keyID))
	})
}

type keyCaptureKey struct{}

// captureKey runs inside the auth middleware and hands the key id of the
// principal out to logRequests, which runs outside it.
func captureKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dst, ok := r.Context().Value(keyCaptureKey{}).(*string); ok {
			if p, ok := auth.PrincipalFrom(r.Context()); ok {
				*dst = p.KeyID
			}
		}
		next.ServeHTTP(w, r)
	})
}
