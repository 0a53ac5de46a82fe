package relay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

type forwardKey struct{}

// ForwardHeaders is middleware that keeps the client headers worth
// forwarding upstream in the request's context, where the relay's
// backends, which only see the context, find them: OpenAI-Organization,
// OpenAI-Project, OpenAI-Beta, Idempotency-Key, X-Request-Id and
// X-Client-Request-Id. The client's credentials (Authorization, x-api-key,
// x-goog-api-key), its cookies and every other header are never
// forwarded. Mount it around the handlers that use relay backends:
//
//	chat.Register(mux, relay.ForwardHeaders(chat.NewHandler(catalog, r.Chat())))
//
// A request with none of these headers passes through unchanged, at no
// cost.
func ForwardHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var kept http.Header
		// Credentials, cookies and hop-by-hop headers are never among
		// these (canonical) names.
		for _, name := range [...]string{
			"Openai-Organization",
			"Openai-Project",
			"Openai-Beta",
			"Idempotency-Key",
			"X-Request-Id",
			"X-Client-Request-Id",
		} {
			if vs := r.Header[name]; len(vs) > 0 {
				if kept == nil {
					kept = make(http.Header, 2)
				}
				kept[name] = append([]string(nil), vs...)
			}
		}
		if kept != nil {
			r = r.WithContext(context.WithValue(r.Context(), forwardKey{}, kept))
		}
		next.ServeHTTP(w, r)
	})
}

// forwardedHeaders returns the headers that [ForwardHeaders] kept in ctx,
// or nil. The caller must not modify them.
func forwardedHeaders(ctx context.Context) http.Header {
	h, _ := ctx.Value(forwardKey{}).(http.Header)
	return h
}

// setForwarded copies the headers that [ForwardHeaders] kept in ctx to h.
func setForwarded(ctx context.Context, h http.Header) {
	for name, vs := range forwardedHeaders(ctx) {
		h[name] = vs
	}
}

// JSONRequest returns a build function for [Relay.Do] that sends body, a
// JSON document (nil for none), with method to path at each upstream
// (u.URL(path)), with the client headers that [ForwardHeaders] kept in
// ctx. The body is replayed on each attempt.
func JSONRequest(ctx context.Context, method, path string, body []byte) func(u *Upstream) (*http.Request, error) {
	return func(u *Upstream) (*http.Request, error) {
		return newJSONRequest(ctx, method, u.URL(path), body)
	}
}

// newJSONRequest makes one upstream request with body (nil for none) and
// the forwarded client headers.
func newJSONRequest(ctx context.Context, method, url string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	setForwarded(ctx, req.Header)
	if body != nil {
		req.Header["Content-Type"] = []string{"application/json"}
	}
	req.Header["Accept"] = []string{"application/json"}
	return req, nil
}
