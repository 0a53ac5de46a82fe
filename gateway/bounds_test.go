package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

func TestNewRefusesARelativePublicBaseURL(t *testing.T) {
	t.Parallel()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	_, err = gateway.New(gateway.Config{Keys: keys, Catalog: demoCatalog(), PublicBaseURL: "api.example.com"})
	require.ErrorContains(t, err, "PublicBaseURL")
}

// completedVideo creates a video task on g, waits until it completes and
// returns its status as fetched with the given Host header.
func completedVideo(t *testing.T, g *gateway.Gateway, host string) videos.Video {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = g.Run(ctx) }()
	status, body := do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a kite","size":"1280x720","seconds":"4"}`)
	require.Equal(t, http.StatusOK, status, body)
	var created videos.Created
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	deadline := time.Now().Add(10 * time.Second)
	for {
		req := httptest.NewRequest("GET", "/v1/videos/"+created.ID, nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer sk-demo")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var v videos.Video
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
		if v.Status == videos.StatusCompleted {
			return v
		}
		require.True(t, time.Now().Before(deadline), "the task did not complete: %s", rec.Body.String())
		time.Sleep(10 * time.Millisecond)
	}
}

func TestVideoURLsIgnoreTheHostHeader(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, base, want string }{
		{"relative without a base URL", "", "/v1/videos/"},
		{"under the public base URL", "https://api.example.com", "https://api.example.com/v1/videos/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newDemo(t, func(c *gateway.Config) {
				c.Videos = demo.NewVideoGenerator(demo.WithVideoDuration(0))
				c.PublicBaseURL = tc.base
			})
			v := completedVideo(t, g, "evil.example")
			require.True(t, strings.HasPrefix(v.Metadata.URL, tc.want), v.Metadata.URL)
			require.True(t, strings.HasPrefix(v.Metadata.ThumbnailURL, tc.want), v.Metadata.ThumbnailURL)
			require.NotContains(t, v.Metadata.URL, "evil.example")
		})
	}
}

func demoCatalog() *models.MemoryCatalog {
	return models.NewMemoryCatalog(gateway.DemoFile().Models...)
}
