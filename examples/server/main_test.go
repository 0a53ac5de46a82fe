package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestExampleServesTheREADMEWalkThrough makes the calls of the README's
// curl walk-through; package gateway tests the wiring in detail.
func TestExampleServesTheREADMEWalkThrough(t *testing.T) {
	g, err := newGateway(gateway.DemoFile(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)

	tests := []struct {
		name, method, path, key, body string
		status                        int
		want                          string // substring of the reply
	}{
		{"model list", "GET", "/v1/models", "sk-demo", "", 200, `"demo-instruct"`},
		{"chat", "POST", "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 200, `"chat.completion"`},
		{"completions", "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi"}`, 200, `"text_completion"`},
		{"responses", "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"hi"}`, 200, `"object":"response"`},
		{"video create", "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, 200, `"queued"`},
		{"empty quota", "POST", "/v1/chat/completions", "sk-demo-empty", `{}`, 403, `"insufficient_quota"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, res.StatusCode, "%s", b)
			require.Contains(t, string(b), tc.want)
		})
	}
}

func TestRateLimitGives429(t *testing.T) {
	g, err := newGateway(gateway.DemoFile(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	// The bucket refills while the loop runs; three times its size is
	// still far more than it can hold however slow the machine.
	var last *httptest.ResponseRecorder
	for range demoRateLimit.Requests * 3 {
		req := httptest.NewRequest("GET", "/v1/models", nil)
		req.Header.Set("Authorization", "Bearer sk-demo")
		last = httptest.NewRecorder()
		g.ServeHTTP(last, req)
		if last.Code == 429 {
			break
		}
	}
	require.Equal(t, 429, last.Code)
	require.Contains(t, last.Body.String(), `"rate_limit_exceeded"`)
	require.NotEmpty(t, last.Header().Get("Retry-After"))
}

// TestConfigRoutesRelayAModel runs the example server with a -config that
// routes one model to another gatewaykit server (itself on the demo
// backends): that model is relayed, the demo models are answered here.
func TestConfigRoutesRelayAModel(t *testing.T) {
	upstream, err := newGateway(gateway.DemoFile(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)

	f := gateway.DemoFile()
	f.Models = append(f.Models, models.Model{ID: "remote-chat", OwnedBy: "upstream", Created: 1,
		EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	f.Routes = []gateway.RouteConfig{{Model: "remote-chat", Upstreams: []gateway.UpstreamConfig{
		{BaseURL: up.URL + "/v1", Key: "sk-demo", Model: "demo-chat"}}}}
	g, err := newGateway(f, slog.New(slog.DiscardHandler))
	require.NoError(t, err)

	for _, model := range []string{"remote-chat", "demo-chat"} {
		req := httptest.NewRequest("POST", "/v1/chat/completions",
			strings.NewReader(`{"model":"`+model+`","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-demo")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		require.Equal(t, 200, rec.Code, rec.Body.String())
		require.Contains(t, rec.Body.String(), `"model":"`+model+`"`, "the gateway's public name")
		require.Contains(t, rec.Body.String(), `You said: \"hi\"`, "the demo text, here or upstream")
	}
	require.Equal(t, int32(1), calls.Load(), "only remote-chat went upstream")
}
