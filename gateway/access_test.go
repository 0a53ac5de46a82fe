package gateway_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
)

// withAccessDemo sets the demo backends of the access points.
func withAccessDemo(c *gateway.Config) {
	c.Embeddings = demo.NewEmbeddingBackend()
	c.Moderations = demo.NewModerationBackend()
	c.Rerank = demo.NewRerankBackend()
	c.Images = demo.NewImageBackend()
	c.Audio = demo.NewAudioBackend()
}

// TestRerank has no SDK (the OpenAI SDK has no rerank): a raw request.
func TestRerank(t *testing.T) {
	t.Parallel()
	g := newDemo(t, withAccessDemo)
	status, body := do(t, g, "POST", "/v1/rerank", "sk-demo",
		`{"model":"demo-rerank","query":"capital of France","documents":["Cats.","Paris is the capital of France."],"top_n":1}`)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, `"results":[{"index":1,"relevance_score":0.7071,"document":{"text":"Paris is the capital of France."}}]`)
}

// TestImageURLsUnderThePublicBaseURL checks that the gateway's
// PublicBaseURL and ImageURLKey reach the images handler.
func TestImageURLsUnderThePublicBaseURL(t *testing.T) {
	t.Parallel()
	cfg := func(c *gateway.Config) {
		withAccessDemo(c)
		c.PublicBaseURL = "https://api.example.com"
		c.ImageURLKey = []byte("replicas share this")
	}
	a, b := newDemo(t, cfg), newDemo(t, cfg)
	status, body := do(t, a, "POST", "/v1/images/generations", "sk-demo", `{"model":"demo-image","prompt":"kite","size":"32x32"}`)
	require.Equal(t, 200, status, body)
	var r struct{ Data []struct{ URL string } }
	require.NoError(t, json.Unmarshal([]byte(body), &r))
	path, ok := strings.CutPrefix(r.Data[0].URL, "https://api.example.com")
	require.True(t, ok, r.Data[0].URL)
	status, _ = do(t, b, "GET", path, "sk-demo", "")
	require.Equal(t, 200, status, "another replica with the same key serves the file")
}

// TestEveryAccessPointAnswers checks that the demo gateway answers every
// OpenAI-format path of spec §4.4 with a working reply, and a JSON error
// (not a plain-text 404) for a bad one.
func TestEveryAccessPointAnswers(t *testing.T) {
	t.Parallel()
	g := newDemo(t, withAccessDemo)
	tests := []struct{ path, body, want string }{
		{"/v1/embeddings", `{"model":"demo-embedding","input":"hi"}`, `"object":"list"`},
		{"/v1/moderations", `{"model":"demo-moderation","input":"hi"}`, `"results"`},
		{"/v1/rerank", `{"model":"demo-rerank","query":"hi","documents":["hi"]}`, `"relevance_score":1`},
		{"/v1/images/generations", `{"model":"demo-image","prompt":"hi","size":"16x16","response_format":"b64_json"}`, `"b64_json"`},
		{"/v1/audio/speech", `{"model":"demo-tts","input":"hi","voice":"alloy"}`, "RIFF"},
	}
	for _, tc := range tests {
		status, body := do(t, g, "POST", tc.path, "sk-demo", tc.body)
		require.Equal(t, 200, status, "%s: %s", tc.path, body)
		require.Contains(t, body, tc.want, tc.path)
		status, body = do(t, g, "POST", tc.path, "sk-demo", `{"model":"demo-chat"}`)
		require.Equal(t, 400, status, "%s: %s", tc.path, body)
		var e struct{ Error struct{ Param string } }
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	}
	for _, path := range []string{"/v1/audio/transcriptions", "/v1/audio/translations"} {
		status, body := do(t, g, "POST", path, "sk-demo", `{}`)
		require.Equal(t, 400, status, body)
		require.True(t, strings.Contains(body, "multipart/form-data"), body)
	}
}
