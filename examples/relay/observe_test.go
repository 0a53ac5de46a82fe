package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/examples/internal/observability"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// TestRelayHealthWhileStarting: while the upstream is down the relay is
// alive but not ready; once it has listed its models and answers, ready.
func TestRelayHealthWhileStarting(t *testing.T) {
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.SetDown(true)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, _, done, _ := startRelay(t, ctx, up, "")

	res, body := send(t, http.MethodGet, srv.URL+"/healthz", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.JSONEq(t, `{"status":"ok"}`, body)
	res, body = send(t, http.MethodGet, srv.URL+"/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)

	up.SetDown(false)
	require.NoError(t, <-done)
	res, body = send(t, http.MethodGet, srv.URL+"/readyz", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	res, body = send(t, http.MethodGet, srv.URL+"/healthz", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
}

// TestRelayMetricsCountUpstreamCalls: the relay's /metrics counts the
// requests and their upstream calls.
func TestRelayMetricsCountUpstreamCalls(t *testing.T) {
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	obs, err := observability.New(context.Background())
	require.NoError(t, err)
	g, _, err := newGateway(context.Background(), config{upstream: up.BaseURL(), logger: slog.New(slog.DiscardHandler), observe: obs})
	require.NoError(t, err)
	srv := serve(t, g, g)
	res, body := send(t, http.MethodPost, srv.URL+"/v1/chat/completions", `{"model":"ok","messages":[{"role":"user","content":"Hi"}]}`,
		"Authorization", "Bearer sk-demo", "Content-Type", "application/json")
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	mux := http.NewServeMux()
	obs.Register(mux)
	admin := httptest.NewServer(mux)
	t.Cleanup(admin.Close)
	res, body = send(t, http.MethodGet, admin.URL+"/metrics", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Contains(t, body, `gatewaykit_requests_total{model="ok",route="POST /v1/chat/completions",status="200"} 1`)
	require.Contains(t, body, `gatewaykit_upstream_requests_total{status="200",upstream="`)
}
