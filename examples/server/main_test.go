package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDemoGateway drives the example server's handler as the README's
// curl walk-through does.
func TestDemoGateway(t *testing.T) {
	h, _, err := newGateway(demoConfig(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	tests := []struct {
		name, method, path, key, body string
		status                        int
		want                          string // substring of the reply
	}{
		{"model list", "GET", "/v1/models", "sk-demo", "", 200, `"demo-video-pro"`},
		{"instruct model listed", "GET", "/v1/models", "sk-demo", "", 200, `"demo-instruct"`},
		{"gemini list", "GET", "/v1beta/models?key=sk-demo", "", "", 200, `"models/demo-chat"`},
		{"chat", "POST", "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 200, `"chat.completion"`},
		{"completions", "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi"}`, 200, `"text_completion"`},
		{"video model on chat", "POST", "/v1/chat/completions", "sk-demo", `{"model":"demo-video","messages":[{"role":"user","content":"hi"}]}`, 400, `compat`},
		{"video create", "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, 200, `"queued"`},
		{"missing key", "GET", "/v1/models", "", "", 401, `"missing_authorization"`},
		{"bad key", "GET", "/v1/models", "sk-nope", "", 401, `"invalid_api_key"`},
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
			require.True(t, json.Valid(b), "%s", b)
			require.Contains(t, string(b), tc.want)
		})
	}
}

func TestRateLimitGives429(t *testing.T) {
	h, _, err := newGateway(demoConfig(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	// The bucket refills while the loop runs; three times its size is
	// still far more than it can hold however slow the machine.
	var last *httptest.ResponseRecorder
	for range demoRateLimit.Requests * 3 {
		req := httptest.NewRequest("GET", "/v1/models", nil)
		req.Header.Set("Authorization", "Bearer sk-demo")
		last = httptest.NewRecorder()
		h.ServeHTTP(last, req)
		if last.Code == 429 {
			break
		}
	}
	require.Equal(t, 429, last.Code)
	require.Contains(t, last.Body.String(), `"rate_limit_exceeded"`)
	require.NotEmpty(t, last.Header().Get("Retry-After"))
}
