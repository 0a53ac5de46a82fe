package relay_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/sse"
)

func TestGeminiGenerateContentRelaysPathModelAndKey(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}],"modelVersion":"up-gem-1"}`)
	})
	g := newAccessGateway(t, up)
	body := `{"contents":[{"role":"user","parts":[{"text":"hello"}]}],"generationConfig":{"temperature":0.5}}`

	// The key in the query, as Gemini clients may send it.
	res := g.post(t, "/v1beta/models/gem-1:generateContent?key="+keyOK, "application/json", strings.NewReader(body), nil)
	require.Equal(t, http.StatusOK, res.StatusCode)
	jsonEqual(t, `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}],"modelVersion":"up-gem-1"}`, readAll(t, res.Body))

	c := up.lastCall(t)
	require.Equal(t, "/v1beta/models/up-gem-1:generateContent", c.Path)
	require.Empty(t, c.Query, "the client's key parameter stays here")
	require.Equal(t, upKey, c.Header.Get("X-Goog-Api-Key"))
	require.Empty(t, c.Header.Get("Authorization"))
	noClientKey(t, c)
	require.Equal(t, body, string(c.Body), "the body goes upstream unchanged")
}

func TestGeminiStreamGenerateContentPassesSSEThrough(t *testing.T) {
	t.Parallel()
	chunks := []string{
		`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"totalTokenCount":5}}`,
	}
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			_, _ = io.WriteString(w, "data: "+c+"\r\n\r\n")
			w.(http.Flusher).Flush()
		}
	})
	g := newAccessGateway(t, up)
	res := g.post(t, "/v1beta/models/gem-1:streamGenerateContent?alt=sse", "application/json",
		strings.NewReader(`{"contents":[]}`), map[string]string{"X-Goog-Api-Key": keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	var got []string
	for ev, err := range sse.Read(res.Body) {
		require.NoError(t, err)
		got = append(got, ev.Data)
	}
	require.Equal(t, chunks, got)

	c := up.lastCall(t)
	require.Equal(t, "/v1beta/models/up-gem-1:streamGenerateContent", c.Path)
	require.Equal(t, "alt=sse", c.Query)
}

func TestGeminiUpstreamBaseURLs(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	for _, tc := range []struct{ base, wantPath string }{
		{"/v1", "/v1beta/models/m:generateContent"},
		{"/api/v1", "/api/v1beta/models/m:generateContent"},
		{"/v1beta", "/v1beta/models/m:generateContent"},
		{"", "/v1beta/models/m:generateContent"},
	} {
		r, err := relay.New([]relay.Route{{Model: "gem-1", Upstreams: []relay.Upstream{{BaseURL: up.srv.URL + tc.base, Model: "m"}}}})
		require.NoError(t, err)
		g := &accessGateway{srv: serveAccess(t, r), upstream: up}
		res := g.post(t, "/v1beta/models/gem-1:generateContent", "application/json", strings.NewReader(`{}`), map[string]string{"X-Goog-Api-Key": keyOK})
		require.Equal(t, http.StatusOK, res.StatusCode, "base %q", tc.base)
		require.Equal(t, tc.wantPath, up.lastCall(t).Path, "base %q", tc.base)
	}
}

func TestGeminiBodyTooLarge(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	g := newAccessGateway(t, up, relay.WithMaxRequestBytes(64))
	// Chunked (no Content-Length), so the limit is found while streaming.
	res := g.post(t, "/v1beta/models/gem-1:generateContent", "application/json",
		io.MultiReader(strings.NewReader(`{"contents":"`), strings.NewReader(strings.Repeat("x", 1000)), strings.NewReader(`"}`)),
		map[string]string{"X-Goog-Api-Key": keyOK})
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	body := string(readAll(t, res.Body))
	require.Contains(t, body, `"status":"INVALID_ARGUMENT"`)
	require.Contains(t, body, "larger than")
}
