package videos_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
)

// getWithHost fetches path with the given Host header.
func getWithHost(t *testing.T, b *testBundle, path, host string) videos.Video {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.server.URL+path, nil)
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	res, err := b.server.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", body)
	var v videos.Video
	require.NoError(t, json.Unmarshal(body, &v))
	return v
}

func TestContentURLsAreNeverBuiltFromTheHostHeader(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	id := b.create(t, keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a kite", "size": "1280x720"})
	b.complete(t, true)

	v := getWithHost(t, b, "/v1/videos/"+id, "evil.example")
	require.Equal(t, "/v1/videos/"+id+"/content", v.Metadata.URL)
	require.Equal(t, "/v1/videos/"+id+"/content?variant=thumbnail", v.Metadata.ThumbnailURL)
}

func TestContentURLsUseThePublicURL(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithPublicURL("https://api.example.com/")}})
	id := b.create(t, keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a kite", "size": "1280x720"})
	b.complete(t, true)

	v := getWithHost(t, b, "/v1/videos/"+id, "evil.example")
	require.Equal(t, "https://api.example.com/v1/videos/"+id+"/content", v.Metadata.URL)
	require.Equal(t, "https://api.example.com/v1/videos/"+id+"/content?variant=thumbnail", v.Metadata.ThumbnailURL)
}
