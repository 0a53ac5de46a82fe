package relay_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// logBuffer collects log lines from many goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// leakGateway is every relayed family (chat, completions, responses and
// the access points) in front of relaytest's fake, each logging at debug
// level into logs, for the tests that an upstream's secrets reach
// neither.
type leakGateway struct {
	srv  *httptest.Server
	logs *logBuffer
}

// The public models of the leak tests: "pub-<mode>" is relayed to the
// fake's model "<mode>".
var leakModes = []string{
	relaytest.ModeOK, relaytest.ModeLeak400, relaytest.ModeLeak401, relaytest.ModeLeak403, relaytest.ModeLeak500,
	relaytest.ModeStatus403, relaytest.ModeErrorEvent,
}

func newLeakGateway(t *testing.T, upstreamKeyOverride string) *leakGateway {
	t.Helper()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.Key = upstreamKey
	key := upstreamKey
	if upstreamKeyOverride != "" {
		key = upstreamKeyOverride // a key the fake refuses
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var routes []relay.Route
	var list []models.Model
	for _, m := range leakModes {
		routes = append(routes, relay.Route{Model: "pub-" + m, Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Key: key, Model: m}}})
		list = append(list, models.Model{ID: "pub-" + m, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	}
	r, err := relay.New(routes, relay.WithLogger(logger))
	require.NoError(t, err)
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "key_test", Quota: auth.LimitedQuota(quota)}))
	catalog := models.NewMemoryCatalog(list...)
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, r.Chat(), endpoint.WithLogger(logger)))
	completions.Register(mux, completions.NewHandler(catalog, r.Completions(), endpoint.WithLogger(logger)))
	responses.Register(mux, responses.NewHandler(catalog, r.Responses(), endpoint.WithLogger(logger)))
	relay.RegisterAccess(mux, relay.NewAccessHandler(r, catalog))
	h := auth.Middleware(keys, auth.WithLogger(logger), auth.WithErrorShape(apierrors.ShapeFor))(relay.ForwardHeaders(mux))
	g := &leakGateway{srv: httptest.NewServer(h), logs: logs}
	t.Cleanup(g.srv.Close)
	return g
}

// leakCall is one request of a relayed family, for a model.
type leakCall struct {
	name   string
	stream bool
	shape  string // "general", "messages" or "google"
	send   func(g *leakGateway, t *testing.T, model string) *http.Response
}

func (g *leakGateway) post(t *testing.T, path, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, g.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if len(header) == 0 {
		header = []string{"Authorization", "Bearer " + clientKey}
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := g.srv.Client().Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { res.Body.Close() })
	return res
}

var leakCalls = []leakCall{
	{name: "chat", shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/chat/completions", `{"model":"`+m+`","messages":[{"role":"user","content":"Hi"}]}`)
	}},
	{name: "chat/stream", stream: true, shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/chat/completions", `{"model":"`+m+`","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	}},
	{name: "completions", shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/completions", `{"model":"`+m+`","prompt":"Hi"}`)
	}},
	{name: "completions/stream", stream: true, shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/completions", `{"model":"`+m+`","prompt":"Hi","stream":true}`)
	}},
	{name: "responses", shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/responses", `{"model":"`+m+`","input":"Hi"}`)
	}},
	{name: "responses/stream", stream: true, shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/responses", `{"model":"`+m+`","input":"Hi","stream":true}`)
	}},
	{name: "embeddings", shape: "general", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/embeddings", `{"model":"`+m+`","input":"Hi"}`)
	}},
	{name: "messages", shape: "messages", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/messages", `{"model":"`+m+`","max_tokens":5,"messages":[{"role":"user","content":"Hi"}]}`, "x-api-key", clientKey)
	}},
	{name: "messages/stream", stream: true, shape: "messages", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1/messages", `{"model":"`+m+`","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"Hi"}]}`, "x-api-key", clientKey)
	}},
	{name: "gemini", shape: "google", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1beta/models/"+m+":generateContent", `{"contents":[{"parts":[{"text":"Hi"}]}]}`, "x-goog-api-key", clientKey)
	}},
	{name: "gemini/stream", stream: true, shape: "google", send: func(g *leakGateway, t *testing.T, m string) *http.Response {
		return g.post(t, "/v1beta/models/"+m+":streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"Hi"}]}]}`, "x-goog-api-key", clientKey)
	}},
}

// requireNoSecret fails if text holds the upstream's key, or a bearer
// token of the sk- kind.
func requireNoSecret(t *testing.T, text, where string) {
	t.Helper()
	require.NotContains(t, text, upstreamKey, "%s: the upstream key", where)
	require.NotContains(t, text, strings.TrimPrefix(upstreamKey, "sk-"), "%s: the upstream key", where)
	require.NotContains(t, text, "Bearer sk-", "%s: a bearer token", where)
}

// requireRefused checks that body is a 502 bad_gateway in shape, with
// the message of an upstream that refused the gateway's key, and not to
// be retried.
func requireRefused(t *testing.T, shape string, res *http.Response, body string) {
	t.Helper()
	require.Equal(t, http.StatusBadGateway, res.StatusCode, body)
	require.Equal(t, "false", res.Header.Get("X-Should-Retry"), "the SDKs must not retry it")
	switch shape {
	case "messages":
		require.Contains(t, body, `"type":"error"`)
	case "google":
		require.Contains(t, body, `"status":"UNAVAILABLE"`)
	default:
		require.Contains(t, body, `"code":"bad_gateway"`)
	}
	require.Contains(t, body, "The upstream refused the gateway's credentials")
	require.NotContains(t, body, "invalid_api_key")
	require.NotContains(t, body, relaytest.LeakHost)
}

// TestUpstreamSecretsNeverLeak: on every relayed family, an upstream that
// echoes the gateway's key and its internal host name in its errors (in
// a 4xx, a 5xx or an error event) reaches neither the client nor the log
// with either the key or a bearer token; its 401 and 403 are the
// gateway's 502, never the client's invalid_api_key, and the upstream's
// reply, redacted, is logged.
func TestUpstreamSecretsNeverLeak(t *testing.T) {
	t.Parallel()
	for _, call := range leakCalls {
		t.Run(call.name, func(t *testing.T) {
			t.Parallel()
			g := newLeakGateway(t, "")
			for _, mode := range leakModes {
				res := call.send(g, t, "pub-"+mode)
				b, _ := io.ReadAll(res.Body)
				body := string(b)
				requireNoSecret(t, body, mode+" client body")
				switch mode {
				case relaytest.ModeLeak401, relaytest.ModeLeak403, relaytest.ModeStatus403:
					requireRefused(t, call.shape, res, body)
				case relaytest.ModeLeak500:
					require.Equal(t, http.StatusBadGateway, res.StatusCode, body)
					require.NotContains(t, body, relaytest.LeakHost)
				case relaytest.ModeLeak400:
					require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
					require.Contains(t, body, "[redacted]", "the rest of a 4xx message reaches the client")
				case relaytest.ModeErrorEvent:
					if call.stream {
						require.Equal(t, http.StatusOK, res.StatusCode, body)
					}
				default:
					require.Equal(t, http.StatusOK, res.StatusCode, body)
				}
			}
			logs := g.logs.String()
			requireNoSecret(t, logs, "log")
			require.Contains(t, logs, "answered 401", "the upstream's refusal is logged")
			require.Contains(t, logs, "answered 403", "the upstream's refusal is logged")
			require.Contains(t, logs, "[redacted]", "the upstream's reply is logged, redacted")
		})
	}
}

// TestUpstreamRefusesTheGatewaysKey: a gateway whose upstream key is
// wrong answers its clients 502 on every family, and the fake's 401,
// which echoes the wrong key, reaches neither the client nor the log.
func TestUpstreamRefusesTheGatewaysKey(t *testing.T) {
	t.Parallel()
	const wrong = "sk-wrong-upstream-key-123"
	g := newLeakGateway(t, wrong)
	for _, call := range leakCalls {
		res := call.send(g, t, "pub-"+relaytest.ModeOK)
		b, _ := io.ReadAll(res.Body)
		require.NotContains(t, string(b), wrong, call.name)
		requireRefused(t, call.shape, res, string(b))
	}
	logs := g.logs.String()
	require.NotContains(t, logs, wrong)
	require.NotContains(t, logs, "Bearer sk-")
	require.Contains(t, logs, "Incorrect API key provided: Bearer [redacted]")
}

// TestUpstream401Shapes pins the 502 of an upstream 401 in the shape of
// each family: chat (the general envelope), and the access points in
// theirs.
func TestUpstream401Shapes(t *testing.T) {
	t.Parallel()
	g := newLeakGateway(t, "")
	for _, tc := range []struct{ call, golden string }{
		{"chat", "chat_upstream_401.json"},
		{"embeddings", "openai_upstream_401.json"},
		{"messages", "messages_upstream_401.json"},
		{"gemini", "gemini_upstream_401.json"},
	} {
		for _, call := range leakCalls {
			if call.name != tc.call {
				continue
			}
			res := call.send(g, t, "pub-"+relaytest.ModeLeak401)
			require.Equal(t, http.StatusBadGateway, res.StatusCode)
			goldenAccess(t, tc.golden, readAll(t, res.Body))
		}
	}
}
