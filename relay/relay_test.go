package relay_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/relay"
)

// get builds a GET of path at each upstream.
func get(ctx context.Context, path string) func(u *relay.Upstream) (*http.Request, error) {
	return func(u *relay.Upstream) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, u.URL(path), nil)
	}
}

func newRelay(t *testing.T, model string, ups []relay.Upstream, opts ...relay.Option) *relay.Relay {
	t.Helper()
	r, err := relay.New([]relay.Route{{Model: model, Upstreams: ups}}, opts...)
	require.NoError(t, err)
	return r
}

// recorder is an upstream that records which servers were called, in
// order, and answers with each server's status.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (rc *recorder) server(t *testing.T, name string, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.calls = append(rc.calls, name)
		rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"message":"from `+name+`","type":"server_error","code":"boom"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestNewRejectsBadRoutes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		routes []relay.Route
	}{
		{"no model", []relay.Route{{Upstreams: []relay.Upstream{{BaseURL: "http://x/v1"}}}}},
		{"no upstream", []relay.Route{{Model: "m"}}},
		{"relative URL", []relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "/v1"}}}}},
		{"other scheme", []relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "ftp://x/v1"}}}}},
		{"duplicate", []relay.Route{
			{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "http://x/v1"}}},
			{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "http://y/v1"}}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := relay.New(tc.routes)
			require.Error(t, err)
		})
	}
}

func TestNewFillsDefaults(t *testing.T) {
	t.Parallel()
	r, err := relay.New([]relay.Route{
		{Model: "b", Upstreams: []relay.Upstream{{BaseURL: "http://up.example:9000/v1/"}}},
		{Model: "a", Upstreams: []relay.Upstream{{BaseURL: "https://x/v1", Name: "x", Model: "x-a"}}},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"b", "a"}, r.Models())
	require.Equal(t, []relay.Upstream{{Name: "up.example:9000", BaseURL: "http://up.example:9000/v1", Model: "b", API: relay.APIOpenAI}}, r.Upstreams("b"))
	require.Equal(t, []relay.Upstream{{Name: "x", BaseURL: "https://x/v1", Model: "x-a", API: relay.APIOpenAI}}, r.Upstreams("a"))
	require.Nil(t, r.Upstreams("c"))
}

func TestDoFailsOverInOrder(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	a := rc.server(t, "a", 500)
	b := rc.server(t, "b", 503)
	c := rc.server(t, "c", 200)
	d := rc.server(t, "d", 200)
	r := newRelay(t, "m", []relay.Upstream{
		{Name: "a", BaseURL: a.URL + "/v1"},
		{Name: "b", BaseURL: b.URL + "/v1"},
		{Name: "c", BaseURL: c.URL + "/v1"},
		{Name: "d", BaseURL: d.URL + "/v1"},
	})
	res, u, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "c", u.Name)
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, []string{"a", "b", "c"}, rc.calls)
}

func TestDoFailsOverOnConnectionErrors(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	ok := rc.server(t, "ok", 200)
	r := newRelay(t, "m", []relay.Upstream{{Name: "dead", BaseURL: deadURL(t)}, {Name: "ok", BaseURL: ok.URL + "/v1"}})
	res, u, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, "ok", u.Name)
}

func TestDoDoesNotFailOverOn4xx(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	a := rc.server(t, "a", 400)
	b := rc.server(t, "b", 200)
	r := newRelay(t, "m", []relay.Upstream{{Name: "a", BaseURL: a.URL + "/v1"}, {Name: "b", BaseURL: b.URL + "/v1"}})
	res, u, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	require.NoError(t, err)
	require.Equal(t, "a", u.Name)
	require.Equal(t, 400, res.StatusCode)
	err = relay.UpstreamError(res, u)
	var e *apierrors.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 400, e.Status)
	require.Equal(t, "from a", e.Message)
	require.Equal(t, apierrors.Code("boom"), e.Code)
	require.Equal(t, []string{"a"}, rc.calls)
}

func TestDoAllFail(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	a := rc.server(t, "a", 500)
	b := rc.server(t, "b", 502)
	r := newRelay(t, "m", []relay.Upstream{{Name: "a", BaseURL: a.URL + "/v1"}, {Name: "b", BaseURL: b.URL + "/v1"}})
	res, u, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	require.Nil(t, res)
	require.Nil(t, u)
	var e *apierrors.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 502, e.Status)
	require.Equal(t, apierrors.CodeBadGateway, e.Code)
	require.NotContains(t, e.Message, "from b", "the upstream's 5xx text is only logged")
	require.Contains(t, e.Error(), "from b")
	require.Equal(t, []string{"a", "b"}, rc.calls)
}

func TestDoUnknownModel(t *testing.T) {
	t.Parallel()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: "http://127.0.0.1:1/v1"}})
	_, _, err := r.Do(t.Context(), "other", get(t.Context(), "/x"))
	var e *apierrors.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, apierrors.CodeModelNotFound, e.Code)
}

func TestDoBuildErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: "http://127.0.0.1:1/v1"}, {BaseURL: "http://127.0.0.1:2/v1"}})
	calls := 0
	boom := errors.New("boom")
	_, _, err := r.Do(t.Context(), "m", func(*relay.Upstream) (*http.Request, error) { calls++; return nil, boom })
	require.ErrorIs(t, err, boom)
	require.Equal(t, 1, calls)
}

func TestDoSendsTheUpstreamKeyOnly(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer srv.Close()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: srv.URL + "/v1", Key: "sk-upstream"}})
	res, _, err := r.Do(t.Context(), "m", func(u *relay.Upstream) (*http.Request, error) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u.URL("/x"), nil)
		req.Header.Set("Authorization", "Bearer sk-client")
		return req, err
	})
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, "Bearer sk-upstream", (<-got).Get("Authorization"))
}

// TestDoFirstByteTimeout: an upstream that never answers is given up on
// after the first-byte timeout, and the next one is tried.
func TestDoFirstByteTimeout(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(cancelled)
	}))
	defer silent.Close()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: silent.URL + "/v1"}}, relay.WithTimeouts(relay.Timeouts{FirstByte: 50 * time.Millisecond}))
	_, _, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	var e *apierrors.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 504, e.Status)
	require.Equal(t, apierrors.CodeGatewayTimeout, e.Code)
	<-cancelled // the upstream saw its request closed
}

// TestDoIdleTimeout: a body that stops arriving fails the read with a 504.
func TestDoIdleTimeout(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: srv.URL + "/v1"}}, relay.WithTimeouts(relay.Timeouts{Idle: 50 * time.Millisecond}))
	res, _, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.Equal(t, "partial", string(b))
	var e *apierrors.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, apierrors.CodeGatewayTimeout, e.Code)
	require.Contains(t, e.Message, "sent nothing")
}

// TestDoClientGoneBeforeFirstByte: cancelling the caller's context closes
// the upstream request at once, and Do reports the context's error.
func TestDoClientGoneBeforeFirstByte(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{})
	cancelled := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(cancelled)
	}))
	defer srv.Close()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: srv.URL + "/v1"}, {BaseURL: srv.URL + "/v1"}})
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-arrived; cancel() }()
	_, _, err := r.Do(ctx, "m", get(ctx, "/x"))
	require.ErrorIs(t, err, context.Canceled)
	<-cancelled
}

func TestForwardHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan http.Header, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	defer up.Close()
	r := newRelay(t, "m", []relay.Upstream{{BaseURL: up.URL + "/v1", Key: "sk-up"}})
	// A chat request through a relay backend forwards the kept headers.
	h := relay.ForwardHeaders(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		res, _, err := r.Do(req.Context(), "m", relay.JSONRequest(req.Context(), http.MethodGet, "/x", nil))
		require.NoError(t, err)
		res.Body.Close()
	}))
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer sk-client")
	req.Header.Set("X-Api-Key", "sk-client")
	req.Header.Set("Cookie", "session=1")
	req.Header.Set("OpenAI-Organization", "org-1")
	req.Header.Set("Idempotency-Key", "idem-1")
	req.Header.Set("X-Unrelated", "x")
	h.ServeHTTP(httptest.NewRecorder(), req)
	hdr := <-got
	require.Equal(t, "org-1", hdr.Get("OpenAI-Organization"))
	require.Equal(t, "idem-1", hdr.Get("Idempotency-Key"))
	require.Equal(t, "Bearer sk-up", hdr.Get("Authorization"))
	require.Empty(t, hdr.Get("X-Api-Key"))
	require.Empty(t, hdr.Get("Cookie"))
	require.Empty(t, hdr.Get("X-Unrelated"))
}

// TestDoLogsFailoverWithoutSecrets: a failover is logged at warn level
// with the upstreams' names and the error, never a key.
func TestDoLogsFailoverWithoutSecrets(t *testing.T) {
	t.Parallel()
	rc := &recorder{}
	a := rc.server(t, "a", 503)
	b := rc.server(t, "b", 200)
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	r := newRelay(t, "m", []relay.Upstream{
		{Name: "primary", BaseURL: a.URL + "/v1", Key: "sk-secret-primary"},
		{Name: "secondary", BaseURL: b.URL + "/v1", Key: "sk-secret-secondary"},
	}, relay.WithLogger(logger))
	res, _, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	require.NoError(t, err)
	res.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, logs.String(), "level=WARN")
	require.Contains(t, logs.String(), "upstream=primary")
	require.Contains(t, logs.String(), "next=secondary")
	require.Contains(t, logs.String(), "503")
	require.NotContains(t, logs.String(), "sk-secret")
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
