package gateway_test

// The declarations of this file are copies of package gateway's own test
// helpers (gateway/*_test.go), which the tests of this package share with
// the tests that stayed there. The test of package
// github.com/gatewaykit/gatewaykit/sdk/internal/copies checks that they
// are the same; go test ./sdk/internal/copies -update copies them again.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// withAccessDemo sets the demo backends of the access points.
func withAccessDemo(c *gateway.Config) {
	c.Embeddings = demo.NewEmbeddingBackend()
	c.Moderations = demo.NewModerationBackend()
	c.Rerank = demo.NewRerankBackend()
	c.Images = demo.NewImageBackend()
	c.Audio = demo.NewAudioBackend()
}

// newDemo assembles the demo gateway of the examples; extra edits the
// config before New.
func newDemo(t *testing.T, extra func(*gateway.Config)) *gateway.Gateway {
	t.Helper()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	text := demo.NewTextBackend()
	c := gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(f.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(demo.WithVideoDuration(time.Second)),
	}
	if extra != nil {
		extra(&c)
	}
	g, err := gateway.New(c)
	require.NoError(t, err)
	return g
}

func do(t *testing.T, h http.Handler, method, path, key, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}
