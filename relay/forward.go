package relay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
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
	return newJSONRequestAt(ctx, method, url, body, false)
}

// newFixedJSONRequest is [newJSONRequest] for a url made of an upstream's
// BaseURL and one of the relay's fixed paths (no ids, no query): its
// parse is kept (see [fixedURLs]).
func newFixedJSONRequest(ctx context.Context, method, url string, body []byte) (*http.Request, error) {
	return newJSONRequestAt(ctx, method, url, body, true)
}

func newJSONRequestAt(ctx context.Context, method, url string, body []byte, fixed bool) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	var req *http.Request
	var err error
	if fixed {
		req, err = fixedURLs.request(ctx, method, url, rd)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, url, rd)
	}
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

// urlCache keeps the URLs that http.NewRequestWithContext parsed for the
// relay's fixed upstream URLs (an upstream's BaseURL and a fixed path),
// so that each request copies one rather than parsing its string again
// (url.Parse was about 1.7% of the relay's CPU per request). It holds at
// most maxFixedURLs; past that, URLs are parsed each time.
type urlCache struct {
	m sync.Map // string -> url.URL, as NewRequestWithContext left it
	n atomic.Int32
}

const maxFixedURLs = 1024

var fixedURLs urlCache

// request is http.NewRequestWithContext(ctx, method, rawURL, body), with
// the URL parsed once: the same request, URL and Host.
func (c *urlCache) request(ctx context.Context, method, rawURL string, body io.Reader) (*http.Request, error) {
	if v, ok := c.m.Load(rawURL); ok {
		req, err := http.NewRequestWithContext(ctx, method, "", body)
		if err != nil {
			return nil, err
		}
		// The empty URL that NewRequestWithContext parsed becomes a copy
		// of the kept one: no further allocation.
		*req.URL = v.(url.URL)
		req.Host = req.URL.Host
		return req, nil
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err == nil && c.n.Load() < maxFixedURLs {
		if _, loaded := c.m.LoadOrStore(rawURL, *req.URL); !loaded {
			c.n.Add(1)
		}
	}
	return req, err
}
