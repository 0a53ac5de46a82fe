package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
)

// TestRunServesHealthAndMetrics: /healthz and /readyz answer on the main
// listener without credentials, and the admin listener's /metrics counts
// a chat request and a stream.
func TestRunServesHealthAndMetrics(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, options{db: "memory", addr: "127.0.0.1:0", adminAddr: "127.0.0.1:0", maxConns: 8,
			textOptions: []demo.TextOption{}}, pw, slog.New(slog.DiscardHandler))
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
		select {
		case err := <-done:
			require.NoError(t, err, "a graceful shutdown")
		case <-time.After(30 * time.Second):
			t.Error("run did not return after its context ended")
		}
	})
	var api, metricsURL string
	br := bufio.NewReader(pr)
	for metricsURL == "" {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "gatewaykit example server on "); ok {
			api = u
		}
		if u, ok := strings.CutPrefix(strings.TrimSpace(line), "metrics: "); ok {
			metricsURL = u
		}
	}
	go io.Copy(io.Discard, br)

	call := func(method, url, key, body string) (int, string) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	status, body := call("GET", api+"/healthz", "", "")
	require.Equal(t, 200, status, body)
	status, body = call("GET", api+"/readyz", "", "")
	require.Equal(t, 200, status, body)
	status, body = call("POST", api+"/v1/chat/completions", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, status, body)
	status, body = call("POST", api+"/v1/chat/completions", "sk-demo", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, 200, status, body)
	status, _ = call("GET", api+"/metrics", "", "")
	require.Equal(t, 401, status, "the metrics are not on the main listener")

	status, body = call("GET", metricsURL, "", "")
	require.Equal(t, 200, status)
	require.Contains(t, body, `gatewaykit_requests_total{model="demo-chat",route="POST /v1/chat/completions",status="200"} 2`)
	require.Contains(t, body, `gatewaykit_time_to_first_token_seconds_count{model="demo-chat",route="POST /v1/chat/completions"} 1`)
	require.Contains(t, body, `gatewaykit_open_streams 0`)
	require.Contains(t, body, `go_goroutines `)
	require.NotContains(t, body, "sk-demo")
}
