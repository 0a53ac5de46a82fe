package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// settled is the tokens of the usage settled against one key.
type settled struct{ input, output int64 }

// recordingKeys is a key store that records the tokens of every
// settlement, by key id.
type recordingKeys struct {
	*auth.MemoryKeyStore
	mu  sync.Mutex
	got map[string]settled
}

func (k *recordingKeys) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	k.mu.Lock()
	s := k.got[p.KeyID]
	s.input += p.InputTokens
	s.output += p.OutputTokens
	k.got[p.KeyID] = s
	k.mu.Unlock()
	return k.MemoryKeyStore.Settle(ctx, p)
}

func (k *recordingKeys) settled(id string) settled {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.got[id]
}

// upstreamTokens is the prompt_tokens of the usage that the relay's fake
// upstream reports.
const upstreamTokens = 7

// relayModel is the model that the relay passes through to its upstream.
const relayModel = "up-embedding"

// inProcess is a transport that serves every request with a handler:
// the relay's upstream, without a network.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// directBundle is the kit's handlers mounted directly on plain
// ServeMuxes behind auth.Middleware, without package gateway.
type directBundle struct {
	keys  *recordingKeys
	kit   http.Handler // chat, responses, embeddings, messages, gemini
	relay http.Handler // the relay's access points
}

func setupDirect(t *testing.T) *directBundle {
	t.Helper()
	ctx := t.Context()
	keys := &recordingKeys{MemoryKeyStore: auth.NewMemoryKeyStore(), got: map[string]settled{}}
	for _, name := range []string{"ok", "full", "rate"} {
		k := auth.Key{ID: "key-" + name, Quota: auth.UnlimitedQuota()}
		switch name {
		case "full": // its quota all reserved by a request in flight
			k.Quota = auth.LimitedQuota(10)
		case "rate":
			k.RateLimit = &auth.Limit{Requests: 1, Period: time.Hour}
		}
		require.NoError(t, keys.Add(ctx, "sk-"+name, k))
	}
	require.NoError(t, keys.Reserve(ctx, "key-full", 10))

	catalog := models.NewMemoryCatalog(append(append(demo.TextModels(), demo.AccessModels()...),
		models.Model{ID: relayModel, EndpointTypes: []models.EndpointType{models.Embeddings}})...)
	text := demo.NewTextBackend()
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, text.Chat()))
	responses.Register(mux, responses.NewHandler(catalog, text.Responses()))
	embeddings.Register(mux, embeddings.NewHandler(catalog, demo.NewEmbeddingBackend()))
	messages.Register(mux, messages.NewHandler(catalog, text.Chat()))
	gemini.Register(mux, gemini.NewHandler(catalog, text.Chat()))

	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5]}],"model":"m","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, upstreamTokens, upstreamTokens)
	})
	r, err := relay.New([]relay.Route{{Model: relayModel, Upstreams: []relay.Upstream{{BaseURL: "http://upstream.internal/v1"}}}},
		relay.WithTransport(inProcess{upstream}))
	require.NoError(t, err)
	relayMux := http.NewServeMux()
	relay.RegisterAccess(relayMux, relay.NewAccessHandler(r, catalog))

	mw := auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor))
	return &directBundle{keys: keys, kit: mw(mux), relay: mw(relayMux)}
}

// serve sends a request with an Info in its context, as a metrics
// middleware does, and returns the status and the Info.
func serve(t *testing.T, h http.Handler, path, key, body string) (int, *telemetry.Info) {
	t.Helper()
	info := new(telemetry.Info)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req.WithContext(telemetry.NewContext(req.Context(), info)))
	return rec.Code, info
}

// TestHandlersFillInfoWithoutGateway: the handlers mounted on a plain
// ServeMux (no package gateway) fill the Info of the request's context:
// the route (their own pattern), the model, the tokens they settled
// against the key (exactly those, once) and the refusal of a key whose
// quota is all reserved.
func TestHandlersFillInfoWithoutGateway(t *testing.T) {
	t.Parallel()
	b := setupDirect(t)
	const user = `"messages":[{"role":"user","content":"Hello, how are you today?"}]`
	tests := []struct {
		name, path, key, body string
		relay                 bool
		status                int
		want                  telemetry.Info // InputTokens and OutputTokens: see below
		output                bool           // whether the reply has output tokens
	}{
		{name: "chat", path: "/v1/chat/completions", key: "ok", body: `{"model":"demo-chat",` + user + `}`, status: 200,
			want: telemetry.Info{Route: chat.Pattern, Model: "demo-chat", KeyID: "key-ok"}, output: true},
		{name: "chat stream", path: "/v1/chat/completions", key: "ok", status: 200,
			body: `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},` + user + `}`,
			want: telemetry.Info{Route: chat.Pattern, Model: "demo-chat", KeyID: "key-ok"}, output: true},
		{name: "responses", path: "/v1/responses", key: "ok", body: `{"model":"demo-chat","input":"Hello, how are you today?"}`, status: 200,
			want: telemetry.Info{Route: responses.Pattern, Model: "demo-chat", KeyID: "key-ok"}, output: true},
		{name: "embeddings", path: "/v1/embeddings", key: "ok", body: `{"model":"` + demo.EmbeddingModel + `","input":"Hello, how are you today?"}`, status: 200,
			want: telemetry.Info{Route: embeddings.Pattern, Model: demo.EmbeddingModel, KeyID: "key-ok"}},
		{name: "messages", path: "/v1/messages", key: "ok", body: `{"model":"demo-chat","max_tokens":256,` + user + `}`, status: 200,
			want: telemetry.Info{Route: messages.Pattern, Model: "demo-chat", KeyID: "key-ok"}, output: true},
		{name: "gemini", path: "/v1beta/models/demo-chat:generateContent", key: "ok", status: 200,
			body: `{"contents":[{"role":"user","parts":[{"text":"Hello, how are you today?"}]}]}`,
			want: telemetry.Info{Route: gemini.Pattern, Model: "demo-chat", KeyID: "key-ok"}, output: true},
		{name: "relay access point", path: "/v1/embeddings", key: "ok", relay: true, body: `{"model":"` + relayModel + `","input":"hi"}`, status: 200,
			want: telemetry.Info{Route: relay.PatternEmbeddings, Model: relayModel, KeyID: "key-ok", InputTokens: upstreamTokens}},
		{name: "chat quota", path: "/v1/chat/completions", key: "full", body: `{"model":"demo-chat",` + user + `}`, status: 403,
			want: telemetry.Info{Route: chat.Pattern, Model: "demo-chat", KeyID: "key-full", Refusal: telemetry.RefusalQuota}},
		{name: "embeddings quota", path: "/v1/embeddings", key: "full", body: `{"model":"` + demo.EmbeddingModel + `","input":"hi"}`, status: 403,
			want: telemetry.Info{Route: embeddings.Pattern, Model: demo.EmbeddingModel, KeyID: "key-full", Refusal: telemetry.RefusalQuota}},
		{name: "relay quota", path: "/v1/embeddings", key: "full", relay: true, body: `{"model":"` + relayModel + `","input":"hi"}`, status: 403,
			want: telemetry.Info{Route: relay.PatternEmbeddings, Model: relayModel, KeyID: "key-full", Refusal: telemetry.RefusalQuota}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Sequential: the cases of one key share its settlements.
			h := b.kit
			if tc.relay {
				h = b.relay
			}
			before := b.keys.settled(tc.want.KeyID)
			status, info := serve(t, h, tc.path, "sk-"+tc.key, tc.body)
			require.Equal(t, tc.status, status)
			after := b.keys.settled(tc.want.KeyID)
			// The tokens are those that the handler settled against the
			// key, once.
			require.Equal(t, after.input-before.input, info.InputTokens, "input tokens")
			require.Equal(t, after.output-before.output, info.OutputTokens, "output tokens")
			if tc.status == 200 {
				require.Positive(t, info.InputTokens)
				require.Equal(t, tc.output, info.OutputTokens > 0, "output tokens: %d", info.OutputTokens)
			}
			if tc.want.InputTokens != 0 {
				require.Equal(t, tc.want.InputTokens, info.InputTokens)
			}
			got := *info
			got.InputTokens, got.OutputTokens = tc.want.InputTokens, tc.want.OutputTokens
			require.Equal(t, tc.want, got)
		})
	}
}

// TestRateLimitRefusalWithoutGateway: the auth middleware in front of the
// handlers records a rate limit refusal; the handler was not reached, so
// the request has no route (package gateway would give its pattern).
func TestRateLimitRefusalWithoutGateway(t *testing.T) {
	t.Parallel()
	b := setupDirect(t)
	body := `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	status, info := serve(t, b.kit, "/v1/chat/completions", "sk-rate", body)
	require.Equal(t, 200, status)
	require.Equal(t, chat.Pattern, info.Route)
	require.Empty(t, info.Refusal)
	status, info = serve(t, b.kit, "/v1/chat/completions", "sk-rate", body)
	require.Equal(t, 429, status)
	require.Equal(t, telemetry.Info{KeyID: "key-rate", Refusal: telemetry.RefusalRateLimit}, *info)
}

// TestHandlerKeepsTheRouteOfItsRouter: a route set before the handler
// (by the router that served the request, as package gateway does) is
// kept; the handler fills only an empty one.
func TestHandlerKeepsTheRouteOfItsRouter(t *testing.T) {
	t.Parallel()
	b := setupDirect(t)
	info := &telemetry.Info{Route: "POST /api/chat"}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-ok")
	rec := httptest.NewRecorder()
	b.kit.ServeHTTP(rec, req.WithContext(telemetry.NewContext(req.Context(), info)))
	require.Equal(t, 200, rec.Code)
	require.Equal(t, "POST /api/chat", info.Route)
	require.Equal(t, "demo-chat", info.Model)
}
