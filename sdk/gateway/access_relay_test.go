package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// TestServedAccessPointsBehindARelay mounts the demo backends of the
// access points and a relay that routes one embedding model to an
// OpenAI-compatible fake upstream: that model's requests are passed
// through, and those for the demo models are served here, JSON and
// multipart alike (relay.WithFallback).
func TestServedAccessPointsBehindARelay(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "remote-embed", Upstreams: []relay.Upstream{
		{BaseURL: up.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK}}}})
	require.NoError(t, err)
	g := newDemo(t, func(c *gateway.Config) {
		withAccessDemo(c)
		ms, err := c.Catalog.List(context.Background())
		require.NoError(t, err)
		ms = append(ms, models.Model{ID: "remote-embed", OwnedBy: "upstream", Created: 1,
			EndpointTypes: []models.EndpointType{models.Embeddings}})
		c.Catalog = models.NewMemoryCatalog(ms...)
		c.Relay = r
	})
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-demo"),
		option.WithMaxRetries(0), option.WithHTTPClient(srv.Client()))

	routed, err := client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
		Model: "remote-embed", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")}})
	require.NoError(t, err)
	require.Equal(t, []float64{0.25, -0.5}, routed.Data[0].Embedding, "the upstream's reply, passed through")
	last := up.Last()
	require.Equal(t, "/v1/embeddings", last.Path)
	require.Contains(t, string(last.Body), `"model":"`+relaytest.ModeOK+`"`)
	n := len(up.Requests())

	served, err := client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
		Model: demo.EmbeddingModel, Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("hello")}})
	require.NoError(t, err)
	require.Len(t, served.Data[0].Embedding, demo.EmbeddingDimensions, "the demo's vector")

	mod, err := client.Moderations.New(t.Context(), openai.ModerationNewParams{
		Model: demo.ModerationModel, Input: openai.ModerationNewParamsInputUnion{OfString: openai.String("kill")}})
	require.NoError(t, err)
	require.True(t, mod.Results[0].Categories.Violence)

	wav := speakWAV(t, client, "Through the relay.", 1)
	tr, err := client.Audio.Transcriptions.New(t.Context(), openai.AudioTranscriptionNewParams{
		Model: demo.TranscriptionModel, File: openai.File(bytes.NewReader(wav), "s.wav", "audio/wav")})
	require.NoError(t, err)
	require.Equal(t, "Through the relay.", tr.Text, "a multipart upload reaches the served handler whole")

	img, err := client.Images.Generate(t.Context(), openai.ImageGenerateParams{Model: demo.ImageModel, Prompt: "kite", Size: "32x32"})
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+img.Data[0].URL, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode, string(body))
	require.Equal(t, "image/png", res.Header.Get("Content-Type"))

	status, reply := do(t, g, "POST", "/v1/rerank", "sk-demo", `{"model":"demo-rerank","query":"a","documents":["a"]}`)
	require.Equal(t, 200, status, reply)
	require.Len(t, up.Requests(), n, "the demo models never reach the upstream")
}
