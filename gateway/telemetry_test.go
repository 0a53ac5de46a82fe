package gateway_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// settledKeys is a key store that records the tokens settled for each
// request, by the telemetry.Info of its context.
type settledKeys struct {
	auth.KeyStore
	mu  sync.Mutex
	got map[*telemetry.Info][2]int64
}

func (k *settledKeys) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	k.mu.Lock()
	s := k.got[telemetry.FromContext(ctx)]
	k.got[telemetry.FromContext(ctx)] = [2]int64{s[0] + p.InputTokens, s[1] + p.OutputTokens}
	k.mu.Unlock()
	return k.KeyStore.Settle(ctx, p)
}

func (k *settledKeys) of(info *telemetry.Info) [2]int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.got[info]
}

// TestGatewayFillsTelemetryInfo: the route, the model (only a catalogue
// one), the tokens settled (exactly those, counted once), the key id (of
// a known key, never for an unknown secret) and the refusals of the
// gateway's own limits reach the telemetry.Info of the request's
// context.
func TestGatewayFillsTelemetryInfo(t *testing.T) {
	t.Parallel()
	var keys *settledKeys
	g := newDemo(t, func(c *gateway.Config) {
		keys = &settledKeys{KeyStore: c.Keys, got: map[*telemetry.Info][2]int64{}}
		c.Keys = keys
		c.Embeddings = demo.NewEmbeddingBackend()
	})
	const chatBody = `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, key, body string
		want                          telemetry.Info // but the tokens: those settled
		tokens                        bool           // whether the request settles tokens
	}{
		{"chat", "POST", "/v1/chat/completions", "sk-demo", chatBody,
			telemetry.Info{Route: "POST /v1/chat/completions", Model: "demo-chat", KeyID: "key-demo"}, true},
		{"stream", "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi","stream":true}`,
			telemetry.Info{Route: "POST /v1/completions", Model: "demo-instruct", KeyID: "key-demo"}, true},
		{"embeddings", "POST", "/v1/embeddings", "sk-demo", `{"model":"demo-embedding","input":"hi"}`,
			telemetry.Info{Route: "POST /v1/embeddings", Model: "demo-embedding", KeyID: "key-demo"}, true},
		{"unknown model", "POST", "/v1/chat/completions", "sk-demo", `{"model":"made-up","messages":[{"role":"user","content":"hi"}]}`,
			telemetry.Info{Route: "POST /v1/chat/completions", KeyID: "key-demo"}, false},
		{"model list", "GET", "/v1/models", "sk-demo", "", telemetry.Info{Route: "GET /v1/models", KeyID: "key-demo"}, false},
		{"refused before routing", "POST", "/v1/chat/completions", "sk-nope", chatBody,
			telemetry.Info{Route: "POST /v1/chat/completions"}, false},
		{"quota", "POST", "/v1/chat/completions", "sk-demo-empty", chatBody,
			telemetry.Info{Route: "POST /v1/chat/completions", KeyID: "key-demo-empty", Refusal: telemetry.RefusalQuota}, false},
		{"unrouted", "GET", "/v2/nothing", "sk-demo", "", telemetry.Info{Route: "/", KeyID: "key-demo"}, false},
		{"health", "GET", "/readyz", "", "", telemetry.Info{Route: "GET /readyz"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info := new(telemetry.Info)
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+tc.key)
			req.Header.Set("Content-Type", "application/json")
			g.ServeHTTP(httptest.NewRecorder(), req.WithContext(telemetry.NewContext(req.Context(), info)))
			// The tokens are those that the handler settled, once.
			settled := keys.of(info)
			require.Equal(t, settled, [2]int64{info.InputTokens, info.OutputTokens})
			require.Equal(t, tc.tokens, info.InputTokens > 0, "input tokens: %d", info.InputTokens)
			got := *info
			got.InputTokens, got.OutputTokens = 0, 0
			require.Equal(t, tc.want, got)
		})
	}
}

// TestGatewayRecordsRateLimitRefusals: the 429 of a key over its rate
// limit is recorded as a refusal.
func TestGatewayRecordsRateLimitRefusals(t *testing.T) {
	t.Parallel()
	g := newDemo(t, nil)
	var refused int
	for range 8 { // sk-demo-limited allows 5 requests a minute
		info := new(telemetry.Info)
		req := httptest.NewRequest("GET", "/v1/models", nil)
		req.Header.Set("Authorization", "Bearer sk-demo-limited")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req.WithContext(telemetry.NewContext(req.Context(), info)))
		if rec.Code == 429 {
			refused++
			require.Equal(t, telemetry.RefusalRateLimit, info.Refusal)
		} else {
			require.Empty(t, info.Refusal)
		}
	}
	require.Equal(t, 3, refused)
}
