package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

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

func TestGatewayServesEveryFamily(t *testing.T) {
	t.Parallel()
	g := newDemo(t, nil)
	tests := []struct {
		name, method, path, key, body string
		status                        int
		want                          string // substring of the reply
	}{
		{"model list", "GET", "/v1/models", "sk-demo", "", 200, `"demo-video-pro"`},
		{"one model", "GET", "/v1/models/demo-chat", "sk-demo", "", 200, `"id":"demo-chat"`},
		{"gemini list", "GET", "/v1beta/models?key=sk-demo", "", "", 200, `"models/demo-chat"`},
		{"chat", "POST", "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 200, `"chat.completion"`},
		{"completions", "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi"}`, 200, `"text_completion"`},
		{"messages", "POST", "/v1/messages", "sk-demo", `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, 200, `"type":"message"`},
		{"messages without max_tokens", "POST", "/v1/messages", "sk-demo", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 400, `"type":"invalid_request_error"`},
		{"responses", "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"hi"}`, 200, `"object":"response"`},
		{"video create", "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, 200, `"queued"`},
		{"video model on chat", "POST", "/v1/chat/completions", "sk-demo", `{"model":"demo-video","messages":[{"role":"user","content":"hi"}]}`, 400, `compat`},
		{"missing key", "GET", "/v1/models", "", "", 401, `"missing_authorization"`},
		{"bad key", "GET", "/v1/models", "sk-nope", "", 401, `"invalid_api_key"`},
		{"empty quota", "POST", "/v1/chat/completions", "sk-demo-empty", `{}`, 403, `"insufficient_quota"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := do(t, g, tc.method, tc.path, tc.key, tc.body)
			require.Equal(t, tc.status, status, "%s", body)
			require.True(t, json.Valid([]byte(body)), "%s", body)
			require.Contains(t, body, tc.want)
		})
	}
}

func TestGatewayLeavesUnsetFamiliesUnmounted(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) { c.Completions, c.Responses, c.Videos = nil, nil, nil })
	status, _ := do(t, g, "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi"}`)
	require.Equal(t, http.StatusNotFound, status)
	status, _ = do(t, g, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"hi"}`)
	require.Equal(t, http.StatusNotFound, status)
	status, _ = do(t, g, "GET", "/v1/videos/task_x", "sk-demo", "")
	require.Equal(t, http.StatusNotFound, status)
	require.NoError(t, g.Run(context.Background()), "Run without videos returns at once")
	require.NoError(t, g.Shutdown(context.Background()))
}

func TestGatewayRoutesAreBehindAuth(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.Routes = func(mux *http.ServeMux) {
			mux.HandleFunc("GET /v1/whoami", func(w http.ResponseWriter, r *http.Request) {
				p, _ := auth.PrincipalFrom(r.Context())
				io.WriteString(w, p.KeyID)
			})
		}
	})
	status, body := do(t, g, "GET", "/v1/whoami", "sk-demo", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "key-demo", body)
	status, body = do(t, g, "GET", "/v1/whoami", "", "")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, `"missing_authorization"`)
}

func TestGatewayRateLimit(t *testing.T) {
	t.Parallel()
	limit := auth.Limit{Requests: 3, Period: time.Hour}
	g := newDemo(t, func(c *gateway.Config) { c.RateLimit = limit })
	for range limit.Requests {
		status, body := do(t, g, "GET", "/v1/models", "sk-demo", "")
		require.Equal(t, http.StatusOK, status, "%s", body)
	}
	status, body := do(t, g, "GET", "/v1/models", "sk-demo", "")
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Contains(t, body, `"rate_limit_exceeded"`)
}

// TestGatewayAccessLog runs the gateway on a real server, so that
// streams flush through the net/http writer: every line names the status
// the client got and the key id (refused requests included), never the
// secret.
func TestGatewayAccessLog(t *testing.T) {
	t.Parallel()
	lines := make(chan string, 100)
	logger := slog.New(slog.NewTextHandler(lineWriter(lines), nil))
	g := newDemo(t, func(c *gateway.Config) { c.Logger, c.AccessLog = logger, true })
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)

	tests := []struct {
		name, path, key, body string
		status                int
		keyID                 string
	}{
		{"allowed", "/v1/models", "sk-demo", "", 200, "key-demo"},
		{"chat stream", "/v1/chat/completions", "sk-demo", `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 200, "key-demo"},
		{"responses stream", "/v1/responses", "sk-demo", `{"model":"demo-chat","stream":true,"input":"hi"}`, 200, "key-demo"},
		{"unknown key", "/v1/models", "sk-nope", "", 401, `""`},
		{"no quota", "/v1/chat/completions", "sk-demo-empty", `{}`, 403, "key-demo-empty"},
		{"rate limited", "/v1/models", "sk-demo-limited", "", 429, "key-demo-limited"},
	}
	for _, tc := range tests {
		var status int
		var line string
		for range 6 { // sk-demo-limited allows 5
			status = doHTTP(t, srv.URL, tc.path, tc.key, tc.body)
			select {
			case line = <-lines:
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: no access log line", tc.name)
			}
			if status != 200 || tc.status == 200 {
				break
			}
		}
		require.Equal(t, tc.status, status, tc.name)
		require.Contains(t, line, fmt.Sprintf(" status=%d ", tc.status), tc.name)
		require.True(t, strings.HasSuffix(line, " key_id="+tc.keyID), "%s: %s", tc.name, line)
		require.NotContains(t, line, tc.key, "%s: no secret", tc.name)
	}
}

// lineWriter sends each log line (without its newline) to lines.
type lineWriter chan<- string

func (l lineWriter) Write(p []byte) (int, error) {
	l <- strings.TrimSuffix(string(p), "\n")
	return len(p), nil
}

// doHTTP makes a request over the network and reads the whole reply.
func doHTTP(t *testing.T, base, path, key, body string) int {
	t.Helper()
	method := "GET"
	if body != "" {
		method = "POST"
	}
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	_, err = io.Copy(io.Discard, res.Body)
	require.NoError(t, err)
	return res.StatusCode
}
func TestNewRejectsMissingStores(t *testing.T) {
	t.Parallel()
	_, err := gateway.New(gateway.Config{Catalog: models.NewMemoryCatalog()})
	require.ErrorContains(t, err, "nil Keys")
	_, err = gateway.New(gateway.Config{Keys: auth.NewMemoryKeyStore()})
	require.ErrorContains(t, err, "nil Catalog")
}

func TestGatewayAuthOptionsPickTheErrorShape(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.AuthOptions = []auth.Option{auth.WithErrorShape(func(r *http.Request) apierrors.Shape {
			if r.URL.Path == "/v1/messages" {
				return apierrors.Messages
			}
			return apierrors.General
		})}
	})
	status, body := do(t, g, "POST", "/v1/messages", "", `{}`)
	require.Equal(t, http.StatusUnauthorized, status)
	require.JSONEq(t, `"error"`, mustField(t, body, "type"), "the messages-format envelope: %s", body)
	status, body = do(t, g, "GET", "/v1/models", "", "")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, `"missing_authorization"`, "other paths keep the general shape")
}

func mustField(t *testing.T, body, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return string(m[name])
}

// TestUnroutedRequestsAnswerInTheFamilysShape checks that what no route
// serves gets a JSON error in the shape of its path's family, never
// ServeMux's text/plain: 404 not_found, or 405 with Allow for a path that
// other methods serve; and that the auth middleware refuses in the same
// shape.
func TestUnroutedRequestsAnswerInTheFamilysShape(t *testing.T) {
	t.Parallel()
	g := newDemo(t, nil)
	tests := []struct {
		name, method, path string
		key                string
		header             http.Header
		status             int
		allow              string
		want               string // the body, as JSON
	}{
		{name: "unknown path", method: "GET", path: "/v1/nope", key: "sk-demo", status: 404,
			want: `{"error":{"message":"Unknown request URL: GET /v1/nope. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}`},
		{name: "wrong method on chat", method: "GET", path: "/v1/chat/completions", key: "sk-demo", status: 405, allow: "POST",
			want: `{"error":{"message":"The method GET is not allowed on /v1/chat/completions; use POST.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "wrong method on the model list", method: "DELETE", path: "/v1/models", key: "sk-demo", status: 405, allow: "GET, HEAD",
			want: `{"error":{"message":"The method DELETE is not allowed on /v1/models; use GET or HEAD.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`},
		{name: "unknown gemini path", method: "POST", path: "/v1beta/nope?key=sk-demo", status: 404,
			want: `{"error":{"code":404,"message":"Unknown request URL: POST /v1beta/nope. Please check the URL and the method.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"NOT_FOUND","domain":"gatewaykit"}]}}`},
		{name: "gemini path without a key", method: "GET", path: "/v1beta/models", status: 401},
		{name: "messages path without a key", method: "POST", path: "/v1/messages", status: 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			rec := httptest.NewRecorder()
			g.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			require.Equal(t, tc.allow, rec.Header().Get("Allow"))
			if tc.want != "" {
				require.JSONEq(t, tc.want, rec.Body.String())
				return
			}
			// The auth middleware's refusal, in the family's shape.
			var body map[string]any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
			switch {
			case strings.HasPrefix(tc.path, "/v1beta/"):
				require.EqualValues(t, 401, body["error"].(map[string]any)["code"], "Google's error object")
				require.Equal(t, "UNAUTHENTICATED", body["error"].(map[string]any)["status"])
			default:
				require.Equal(t, "error", body["type"], "the messages envelope")
				require.Equal(t, "authentication_error", body["error"].(map[string]any)["type"])
			}
		})
	}
}

// TestRoutesReplaceAServedAccessPoint: a route that Config.Routes mounts
// for /v1/messages is used instead of the gateway's own translation.
func TestRoutesReplaceAServedAccessPoint(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.Routes = func(mux *http.ServeMux) {
			mux.Handle("POST /v1/messages", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "mine")
			}))
		}
	})
	status, body := do(t, g, "POST", "/v1/messages", "sk-demo", `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "mine", body)
}

// TestGatewayAccessLogSource: the access log line records its call site
// once rather than per request; a handler with AddSource still names the
// gateway's access log, on every line, and a logger whose level is above
// Info gets no line.
func TestGatewayAccessLogSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		level slog.Level
		want  int // lines for two requests
	}{
		{"info", slog.LevelInfo, 2},
		{"warn only", slog.LevelWarn, 0},
	}
	for _, tc := range tests {
		lines := make(chan string, 10)
		logger := slog.New(slog.NewTextHandler(lineWriter(lines), &slog.HandlerOptions{AddSource: true, Level: tc.level}))
		g := newDemo(t, func(c *gateway.Config) { c.Logger, c.AccessLog = logger, true })
		for range 2 {
			status, body := do(t, g, "GET", "/v1/models", "sk-demo", "")
			require.Equal(t, http.StatusOK, status, "%s: %s", tc.name, body)
		}
		close(lines)
		var got []string
		for l := range lines {
			if strings.Contains(l, "msg=request ") {
				got = append(got, l)
			}
		}
		require.Len(t, got, tc.want, tc.name)
		for _, l := range got {
			require.Regexp(t, `source=\S*gateway/accesslog\.go:\d+ `, l, tc.name)
		}
	}
}
