package gateway_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// TestGatewayRelaysRoutedModelsOnly mounts the demo backends and a relay
// that routes one model to a fake upstream: that model is relayed, the
// demo models are answered here, and the access points are mounted.
func TestGatewayRelaysRoutedModelsOnly(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "remote", Upstreams: []relay.Upstream{
		{BaseURL: up.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK}}}})
	require.NoError(t, err)

	g := newDemo(t, func(c *gateway.Config) {
		ms, err := c.Catalog.List(context.Background())
		require.NoError(t, err)
		ms = append(ms, models.Model{ID: "remote", OwnedBy: "upstream", Created: 1,
			EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
		c.Catalog = models.NewMemoryCatalog(ms...)
		c.Relay = r
	})

	tests := []struct {
		name, path, body string
		relayed          bool
		status           int
		want             string
	}{
		{"chat, routed", "/v1/chat/completions", `{"model":"remote","messages":[{"role":"user","content":"hi"}]}`, true, 200, `"model":"remote"`},
		{"chat, demo", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, false, 200, `gatewaykit demo model`},
		{"chat stream, routed", "/v1/chat/completions", `{"model":"remote","stream":true,"messages":[{"role":"user","content":"hi"}]}`, true, 200, `data: [DONE]`},
		{"completions, routed", "/v1/completions", `{"model":"remote","prompt":"hi"}`, true, 200, `"text_completion"`},
		{"responses, routed", "/v1/responses", `{"model":"remote","input":"hi"}`, true, 200, `"object":"response"`},
		{"responses, demo", "/v1/responses", `{"model":"demo-chat","input":"hi"}`, false, 200, `gatewaykit demo model`},
		{"completions, demo", "/v1/completions", `{"model":"demo-instruct","prompt":"hi"}`, false, 200, `"text_completion"`},
		{"embeddings, routed", "/v1/embeddings", `{"model":"remote","input":"hi"}`, true, 200, `"embedding"`},
		// The fake upstream has no moderations: its 404 comes back.
		{"moderations, routed", "/v1/moderations", `{"model":"remote","input":"hi"}`, true, 404, `"not_found"`},
	}
	for _, tc := range tests {
		before := len(up.Requests())
		status, body := do(t, g, "POST", tc.path, "sk-demo", tc.body)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, body)
		require.Contains(t, body, tc.want, tc.name)
		if !tc.relayed {
			require.Len(t, up.Requests(), before, "%s: the upstream was not asked", tc.name)
			continue
		}
		require.Len(t, up.Requests(), before+1, "%s: the upstream was asked once", tc.name)
		last := up.Last()
		require.Equal(t, tc.path, last.Path, tc.name)
		require.Equal(t, "Bearer sk-upstream", last.Header.Get("Authorization"), "%s: the upstream's key, not the client's", tc.name)
		require.Contains(t, string(last.Body), `"model":"`+relaytest.ModeOK+`"`, "%s: the upstream's name of the model", tc.name)
	}
}

// TestGatewayRelayWithoutOwnBackends relays every family when the config
// gives no backend of its own.
func TestGatewayRelayWithoutOwnBackends(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "remote", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Model: relaytest.ModeOK}}}})
	require.NoError(t, err)
	keys, err := gateway.NewKeyStore(context.Background(), gateway.DemoKeys())
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{
		Keys: keys,
		Catalog: models.NewMemoryCatalog(models.Model{ID: "remote", OwnedBy: "upstream", Created: 1,
			EndpointTypes: []models.EndpointType{models.Compat}}),
		Relay: r,
	})
	require.NoError(t, err)
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		status, body := do(t, g, "POST", path, "sk-demo", `{"model":"remote","prompt":"hi","messages":[{"role":"user","content":"hi"}]}`)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, path, up.Last().Path)
	}
	status, body := do(t, g, "POST", "/v1/messages", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, `"type":"error"`, "the messages format refuses in its own shape")
}

// TestGatewayCreatesRelayedVideosUpstreamBeforeAnswering: the by-model
// video router passes the relay's videos.Submitter on, so that a routed
// model's task is created upstream before the client is answered, and a
// request the upstream refuses is refused at once; the demo's video
// models are not sent upstream.
func TestGatewayCreatesRelayedVideosUpstreamBeforeAnswering(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "remote-video", Upstreams: []relay.Upstream{
		{BaseURL: up.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK}}}})
	require.NoError(t, err)
	g := newDemo(t, func(c *gateway.Config) {
		ms, err := c.Catalog.List(context.Background())
		require.NoError(t, err)
		ms = append(ms, models.Model{ID: "remote-video", OwnedBy: "upstream", Created: 1,
			EndpointTypes: []models.EndpointType{models.CompatVideo}})
		c.Catalog = models.NewMemoryCatalog(ms...)
		c.Relay = r
	})

	status, body := do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"remote-video","prompt":"a fox","seconds":5}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.JSONEq(t, `{"code":"invalid_value","message":"Invalid value: '5'. Supported values are: '4', '8', '12'.",
		"error":{"message":"Invalid value: '5'. Supported values are: '4', '8', '12'.","type":"invalid_request_error","param":"seconds","code":"invalid_value"}}`, body)
	require.Len(t, up.Requests(), 1)

	status, body = do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"remote-video","prompt":"a fox","seconds":4}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, up.Requests(), 2, "created upstream before the reply")
	require.Equal(t, "/v1/videos", up.Last().Path)

	status, body = do(t, g, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"a fox","seconds":4,"size":"1280x720"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, up.Requests(), 2, "the demo's model is not sent upstream")
}
