package relay

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFixedURLRequest: a request made from a kept URL is the one
// http.NewRequestWithContext makes from the string, on the first call and
// on later ones, and no request shares its URL with another.
func TestFixedURLRequest(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, url string }{
		{"plain", "http://127.0.0.1:9/v1/chat/completions"},
		{"https no port", "https://api.example.com/v1/responses"},
		{"empty port", "http://example.com:/v1/messages"},
		{"ipv6", "http://[::1]:8080/v1/chat/completions"},
		{"escaped base", "http://example.com/a%2Fb/v1/completions"},
		{"user info", "http://user:pass@example.com/v1/chat/completions"},
	}
	ctx := context.Background()
	body := []byte(`{"model":"m"}`)
	for _, tc := range tests {
		want, err := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, bytes.NewReader(body))
		require.NoError(t, err, tc.name)
		var c urlCache
		var prev *http.Request
		for i := range 3 {
			got, err := c.request(ctx, http.MethodPost, tc.url, bytes.NewReader(body))
			require.NoError(t, err, tc.name)
			require.Equal(t, *want.URL, *got.URL, "%s, call %d", tc.name, i)
			require.Equal(t, want.URL.String(), got.URL.String(), "%s, call %d", tc.name, i)
			require.Equal(t, want.Host, got.Host, "%s, call %d", tc.name, i)
			require.Equal(t, want.ContentLength, got.ContentLength, "%s, call %d", tc.name, i)
			require.NotNil(t, got.GetBody, tc.name)
			data, err := io.ReadAll(got.Body)
			require.NoError(t, err, tc.name)
			require.Equal(t, body, data, tc.name)
			if prev != nil {
				require.NotSame(t, prev.URL, got.URL, tc.name)
			}
			prev = got
			got.URL.Path = "/changed" // must not reach the next request
		}
	}
}

// TestFixedURLRequestBounded: past maxFixedURLs, URLs are parsed as they
// come and no longer kept; a bad URL fails as NewRequestWithContext does.
func TestFixedURLRequestBounded(t *testing.T) {
	t.Parallel()
	var c urlCache
	c.n.Store(maxFixedURLs)
	req, err := c.request(context.Background(), http.MethodPost, "http://example.com/v1/x", nil)
	require.NoError(t, err)
	require.Equal(t, "http://example.com/v1/x", req.URL.String())
	_, kept := c.m.Load("http://example.com/v1/x")
	require.False(t, kept)

	_, err = c.request(context.Background(), http.MethodPost, "http://bad host/\x7f", nil)
	_, want := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://bad host/\x7f", nil)
	require.Error(t, err)
	require.Equal(t, want.Error(), err.Error())
}
