package gateway_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// settlingChat is the demo chat backend, which also settles usage with
// tokens through the request's key store, as the settle points do.
type settlingChat struct{ chat.Backend }

func (b settlingChat) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	pr, _ := auth.PrincipalFrom(ctx)
	_, err := auth.Settle(ctx, auth.SettleParams{KeyID: pr.KeyID, Used: 8, Model: p.Request.Model, InputTokens: 3, OutputTokens: 5})
	if err != nil {
		return nil, err
	}
	return b.Backend.Complete(ctx, p)
}

// TestGatewayFillsTelemetryInfo: the route, the model (only a catalogue
// one), the tokens settled, the key id (of a known key, never for an
// unknown secret) and the refusals of the gateway's own limits reach the
// telemetry.Info of the request's context.
func TestGatewayFillsTelemetryInfo(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.Chat = settlingChat{demo.NewTextBackend().Chat()}
	})
	const chatBody = `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, method, path, key, body string
		want                          telemetry.Info
	}{
		{"chat", "POST", "/v1/chat/completions", "sk-demo", chatBody,
			telemetry.Info{Route: "POST /v1/chat/completions", Model: "demo-chat", InputTokens: 3, OutputTokens: 5, KeyID: "key-demo"}},
		{"stream", "POST", "/v1/completions", "sk-demo", `{"model":"demo-instruct","prompt":"hi","stream":true}`,
			telemetry.Info{Route: "POST /v1/completions", Model: "demo-instruct", KeyID: "key-demo"}},
		{"unknown model", "POST", "/v1/chat/completions", "sk-demo", `{"model":"made-up","messages":[{"role":"user","content":"hi"}]}`,
			telemetry.Info{Route: "POST /v1/chat/completions", KeyID: "key-demo"}},
		{"model list", "GET", "/v1/models", "sk-demo", "", telemetry.Info{Route: "GET /v1/models", KeyID: "key-demo"}},
		{"refused before routing", "POST", "/v1/chat/completions", "sk-nope", chatBody,
			telemetry.Info{Route: "POST /v1/chat/completions"}},
		{"quota", "POST", "/v1/chat/completions", "sk-demo-empty", chatBody,
			telemetry.Info{Route: "POST /v1/chat/completions", KeyID: "key-demo-empty", Refusal: telemetry.RefusalQuota}},
		{"unrouted", "GET", "/v2/nothing", "sk-demo", "", telemetry.Info{Route: "/", KeyID: "key-demo"}},
		{"health", "GET", "/readyz", "", "", telemetry.Info{Route: "GET /readyz"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			info := new(telemetry.Info)
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer "+tc.key)
			req.Header.Set("Content-Type", "application/json")
			g.ServeHTTP(httptest.NewRecorder(), req.WithContext(telemetry.NewContext(req.Context(), info)))
			// The tokens are at least those that settlingChat settles (the
			// endpoint handlers may settle theirs too); the rest is exact.
			require.GreaterOrEqual(t, info.InputTokens, tc.want.InputTokens)
			require.GreaterOrEqual(t, info.OutputTokens, tc.want.OutputTokens)
			got := *info
			got.InputTokens, got.OutputTokens = tc.want.InputTokens, tc.want.OutputTokens
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
