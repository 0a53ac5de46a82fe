package relay_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// createVideo creates a task on the gateway and returns its id.
func (g *gateway) createVideo(t *testing.T, path, body string) string {
	t.Helper()
	res := g.post(t, path, body)
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, 200, res.StatusCode, string(b))
	v := decode(t, strings.NewReader(string(b)))
	require.Equal(t, "queued", v["status"])
	id := v["id"].(string)
	require.True(t, strings.HasPrefix(id, "task_"))
	return id
}

// waitVideo polls the gateway's status endpoint until the task is done.
func (g *gateway) waitVideo(t *testing.T, id string) map[string]any {
	t.Helper()
	var v map[string]any
	require.Eventually(t, func() bool {
		res := g.get(t, "/v1/videos/"+id)
		require.Equal(t, 200, res.StatusCode)
		v = decode(t, res.Body)
		return v["status"] == "completed" || v["status"] == "failed"
	}, 10*time.Second, 5*time.Millisecond)
	return v
}

func TestVideoRelayed(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-ok","prompt":"a red fox","seconds":4,"size":"640x360","x_vendor":{"style":"noir"}}`)
	v := g.waitVideo(t, id)
	require.Equal(t, "completed", v["status"])
	require.Equal(t, id, v["id"], "the gateway's own task id")
	require.Equal(t, "pub-ok", v["model"])
	require.Equal(t, float64(100), v["progress"])
	md := v["metadata"].(map[string]any)
	require.Equal(t, float64(640), md["width"])
	require.Equal(t, float64(24), md["fps"])
	require.NotContains(t, md["url"], g.up.URL, "the upstream's own content URL is not shown")

	// The upstream got the task's request with its model name, and the
	// gateway's task id as the idempotency key.
	creates := 0
	for _, r := range g.up.Requests() {
		if r.Method == "POST" {
			creates++
			require.Equal(t, "/v1/videos", r.Path)
			require.Equal(t, id, r.Header.Get("Idempotency-Key"))
			require.Equal(t, "Bearer "+upstreamKey, r.Header.Get("Authorization"))
			require.JSONEq(t, `{"model":"ok","prompt":"a red fox","seconds":"4","size":"640x360","x_vendor":{"style":"noir"}}`, string(r.Body))
		}
	}
	require.Equal(t, 1, creates)

	res := g.get(t, "/v1/videos/"+id+"/content")
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, relaytest.VideoContent, string(b))
	res = g.get(t, "/v1/videos/"+id+"/content?variant=thumbnail")
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "image/png", res.Header.Get("Content-Type"))
	b, _ = io.ReadAll(res.Body)
	require.Equal(t, relaytest.ThumbnailContent, string(b))
}

func TestVideoMultimodalRelayed(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/vendorai/videos", `{"model":"pub-ok","mode":"t2v","prompt":"waves","resolution":"720p","gen_tier":"fast"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	first := g.up.Requests()[0]
	require.Equal(t, "/v1/vendorai/videos", first.Path)
	require.JSONEq(t, `{"model":"ok","mode":"t2v","prompt":"waves","resolution":"720p","gen_tier":"fast"}`, string(first.Body))
}

// TestVideoContentRedirect: content that the upstream redirects to is
// not copied: the gateway's content endpoint redirects to the same place.
func TestVideoContentRedirect(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-redirect","prompt":"x"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	res := g.get(t, "/v1/videos/"+id+"/content")
	require.Equal(t, 301, res.StatusCode)
	require.Regexp(t, `^`+g.up.URL+`/cdn/video_up\d+\.mp4$`, res.Header.Get("Location"))
	res = g.get(t, "/v1/videos/"+id+"/content?variant=thumbnail")
	require.Equal(t, 301, res.StatusCode)
	require.Regexp(t, `^`+g.up.URL+`/cdn/video_up\d+\.png$`, res.Header.Get("Location"))
	for _, r := range g.up.Requests() {
		require.NotContains(t, r.Path, "/cdn/", "the relay did not follow the redirect")
	}
}

func TestVideoFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, code, message string
	}{
		{relaytest.ModeVideoFail, "content_policy", "The prompt was rejected."},
		{relaytest.ModeStatus400, "invalid_value", "Invalid value for 'temperature'."},
		{relaytest.ModeStatus500, "bad_gateway", "The upstream failed (HTTP 500)."},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil)
			id := g.createVideo(t, "/v1/videos", `{"model":"pub-`+tc.mode+`","prompt":"x"}`)
			v := g.waitVideo(t, id)
			require.Equal(t, "failed", v["status"])
			require.Equal(t, map[string]any{"code": tc.code, "message": tc.message}, v["error"])
		})
	}
}

func TestVideoWithoutThumbnail(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-no-thumbnail","prompt":"x"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	require.Equal(t, 200, g.get(t, "/v1/videos/"+id+"/content").StatusCode)
	require.Equal(t, 404, g.get(t, "/v1/videos/"+id+"/content?variant=thumbnail").StatusCode)
}
