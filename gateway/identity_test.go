package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// acmeSession is the header of the embedder's own sign-in in these tests:
// "s:<user key id>", a session that the embedder has checked.
const acmeSession = "X-Acme-Session"

const identityAdminKey = "admin-key-0123456789abcdef"

// acmeUser is the embedder's identity: the key id of the request's
// session, if any.
func acmeUser(r *http.Request) (string, error) {
	return strings.TrimPrefix(r.Header.Get(acmeSession), "s:"), nil
}

// acmeAuthenticators are the embedder's: its own sessions before API
// keys, both charged to keys.
func acmeAuthenticators(keys auth.KeyStore) []auth.Authenticator {
	return []auth.Authenticator{auth.Identities(keys, acmeUser), auth.APIKeys(keys)}
}

// TestACompanyUserIsChargedLikeAKey is issue 25's: a company user of 30
// tokens, signed in by the embedder's own session header (its key, made
// without a secret, named by its id), gets 200s on chat completions from
// the demo backend, then 403 insufficient_quota, and its usage reads back
// from the admin API: through package gateway, and with the chat handler
// mounted directly behind auth.Middleware on a plain ServeMux.
func TestACompanyUserIsChargedLikeAKey(t *testing.T) {
	t.Parallel()
	catalog := models.NewMemoryCatalog(gateway.DemoFile().Models...)
	for _, tc := range []struct {
		name  string
		mount func(t *testing.T, keys auth.KeyStore) http.Handler
	}{
		{"Gateway", func(t *testing.T, keys auth.KeyStore) http.Handler {
			g, err := gateway.New(gateway.Config{Keys: keys, Catalog: catalog, Chat: demo.NewTextBackend().Chat(),
				Authenticators: acmeAuthenticators(keys)})
			require.NoError(t, err)
			return g
		}},
		{"ServeMux", func(t *testing.T, keys auth.KeyStore) http.Handler {
			mux := http.NewServeMux()
			chat.Register(mux, chat.NewHandler(catalog, demo.NewTextBackend().Chat()))
			return auth.Middleware(keys, auth.WithAuthenticators(acmeAuthenticators(keys)...))(mux)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			keys := auth.NewCachedKeyStore(auth.NewMemoryKeyStore(), time.Hour)
			require.NoError(t, keys.PutKey(ctx, "", auth.Key{ID: "user_ada", Owner: "ada", Quota: auth.LimitedQuota(30)}))
			api := tc.mount(t, keys)
			adminMux := http.NewServeMux()
			admin.Register(adminMux, admin.NewHandler(keys, admin.WithAdminKey(identityAdminKey)))

			var statuses []int
			var used, requests int64
			for range 10 {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
					strings.NewReader(`{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"Hello"}]}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(acmeSession, "s:user_ada")
				w := httptest.NewRecorder()
				api.ServeHTTP(w, req)
				statuses = append(statuses, w.Code)
				if w.Code != http.StatusOK {
					require.Equal(t, http.StatusForbidden, w.Code, "body: %s", w.Body)
					require.Equal(t, "insufficient_quota", errorCode(t, w.Body.String()))
					break
				}
				var reply struct {
					Usage struct {
						TotalTokens int64 `json:"total_tokens"`
					}
				}
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &reply))
				require.Positive(t, reply.Usage.TotalTokens)
				used += reply.Usage.TotalTokens
				requests++
			}
			require.GreaterOrEqual(t, requests, int64(2), "statuses %v", statuses)
			require.Equal(t, http.StatusForbidden, statuses[len(statuses)-1], "statuses %v", statuses)
			require.GreaterOrEqual(t, used, int64(30), "refused once the 30 tokens are spent")

			status, body := adminGet(t, adminMux, "/admin/v1/usage?key_id=user_ada&group_by=key")
			require.Equal(t, http.StatusOK, status, body)
			var usage struct {
				Data []struct {
					KeyID    string `json:"key_id"`
					Requests int64  `json:"requests"`
					In       int64  `json:"input_tokens"`
					Out      int64  `json:"output_tokens"`
				}
			}
			require.NoError(t, json.Unmarshal([]byte(body), &usage))
			require.Len(t, usage.Data, 1, body)
			require.Equal(t, "user_ada", usage.Data[0].KeyID)
			require.Equal(t, requests, usage.Data[0].Requests)
			require.Equal(t, used, usage.Data[0].In+usage.Data[0].Out)

			status, body = adminGet(t, adminMux, "/admin/v1/keys/user_ada")
			require.Equal(t, http.StatusOK, status, body)
			require.JSONEq(t, fmt.Sprintf(`{"quota":30,"used":%d,"remaining":0}`, used), pick(t, body, "quota", "used", "remaining"))

			// Deleted over the admin API, the user is refused at once.
			req := httptest.NewRequest(http.MethodDelete, "/admin/v1/keys/user_ada", nil)
			req.Header.Set("Authorization", "Bearer "+identityAdminKey)
			w := httptest.NewRecorder()
			adminMux.ServeHTTP(w, req)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			req = httptest.NewRequest(http.MethodGet, "/v1/chat/completions", nil)
			req.Header.Set(acmeSession, "s:user_ada")
			w = httptest.NewRecorder()
			api.ServeHTTP(w, req)
			require.Equal(t, http.StatusUnauthorized, w.Code, w.Body.String())
			require.Equal(t, "invalid_api_key", errorCode(t, w.Body.String()))
		})
	}
}

// errorCode is the code of the error body.
func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e struct{ Error struct{ Code string } }
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e.Error.Code
}

func adminGet(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+identityAdminKey)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Code, w.Body.String()
}

// pick returns the JSON object of the members names of the object body.
func pick(t *testing.T, body string, names ...string) string {
	t.Helper()
	var all map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &all))
	some := make(map[string]json.RawMessage, len(names))
	for _, n := range names {
		some[n] = all[n]
	}
	b, err := json.Marshal(some)
	require.NoError(t, err)
	return string(b)
}

// identityStep is one request of TestAnIdentityIsTreatedAsAKey, by the
// principal of the case's first key ("a") or its second ("b").
type identityStep struct {
	as, method, path, body string
	wantStatus             int
	wantCode               string // of an error
	save                   string // the name under which the reply's id is kept, for {name} in later paths
}

// TestAnIdentityIsTreatedAsAKey: every rule that applies to an API key
// applies alike to a key named by the embedder's identity: each case runs
// its requests once with API keys, once with session users whose keys
// (without secrets) have the same fields, and both must answer alike.
func TestAnIdentityIsTreatedAsAKey(t *testing.T) {
	t.Parallel()
	chatBody := func(model string) string {
		return fmt.Sprintf(`{"model":%q,"max_tokens":8,"messages":[{"role":"user","content":"Hello"}]}`, model)
	}
	unlimited := auth.UnlimitedQuota()
	tests := []struct {
		name  string
		keys  [2]auth.Key // a and b; ids are set per run
		steps []identityStep
	}{
		{
			name: "RateLimit",
			keys: [2]auth.Key{{Owner: "acme", Quota: unlimited, RateLimit: &auth.Limit{Requests: 1, Period: time.Minute}}, {Owner: "acme", Quota: unlimited}},
			steps: []identityStep{
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 200},
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 429, wantCode: "rate_limit_exceeded"},
				{as: "b", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 200},
			},
		},
		{
			name: "AllowedModels",
			keys: [2]auth.Key{{Owner: "acme", Quota: unlimited, AllowedModels: []string{"demo-chat"}}, {Owner: "acme", Quota: unlimited}},
			steps: []identityStep{
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 200},
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-reasoner"), wantStatus: 404, wantCode: "model_not_found"},
				{as: "b", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-reasoner"), wantStatus: 200},
			},
		},
		{
			name: "DisabledAndExpired",
			keys: [2]auth.Key{{Owner: "acme", Quota: unlimited, Disabled: true}, {Owner: "acme", Quota: unlimited, ExpiresAt: time.Now().Add(-time.Minute)}},
			steps: []identityStep{
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 401, wantCode: "invalid_api_key"},
				{as: "b", method: "GET", path: "/v1/models", wantStatus: 401, wantCode: "invalid_api_key"},
			},
		},
		{
			name: "BudgetInUSD",
			keys: [2]auth.Key{{Owner: "acme", Quota: auth.Quota{Unlimited: true, BudgetUSD: 1e-9}}, {Owner: "acme", Quota: unlimited}},
			steps: []identityStep{
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 200},
				{as: "a", method: "POST", path: "/v1/chat/completions", body: chatBody("demo-chat"), wantStatus: 403, wantCode: "insufficient_quota"},
				{as: "a", method: "GET", path: "/v1/models", wantStatus: 200},
			},
		},
		{
			name: "StoredResponsesAreTheOwners",
			keys: [2]auth.Key{{Owner: "ada", Quota: unlimited}, {Owner: "bob", Quota: unlimited}},
			steps: []identityStep{
				{as: "a", method: "POST", path: "/v1/responses", body: `{"model":"demo-chat","input":"hi"}`, wantStatus: 200, save: "resp"},
				{as: "a", method: "GET", path: "/v1/responses/{resp}", wantStatus: 200},
				{as: "b", method: "GET", path: "/v1/responses/{resp}", wantStatus: 404, wantCode: "not_found"},
				{as: "b", method: "DELETE", path: "/v1/responses/{resp}", wantStatus: 404, wantCode: "not_found"},
			},
		},
		{
			name: "VideoTasksAreTheOwners",
			keys: [2]auth.Key{{Owner: "ada", Quota: unlimited}, {Owner: "bob", Quota: unlimited}},
			steps: []identityStep{
				{as: "a", method: "POST", path: "/v1/videos", body: `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, wantStatus: 200, save: "task"},
				{as: "a", method: "GET", path: "/v1/videos/{task}", wantStatus: 200},
				{as: "b", method: "GET", path: "/v1/videos/{task}", wantStatus: 404, wantCode: "not_found"},
				{as: "b", method: "DELETE", path: "/v1/videos/{task}", wantStatus: 404, wantCode: "not_found"},
			},
		},
	}
	type outcome struct {
		status int
		code   string
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var runs [2][]outcome
			for i, identity := range []bool{false, true} {
				ctx := context.Background()
				keys := auth.NewMemoryKeyStore()
				credential := map[string]func(*http.Request){}
				for j, name := range []string{"a", "b"} {
					k := tc.keys[j]
					k.ID = fmt.Sprintf("%s-%s", name, map[bool]string{false: "key", true: "user"}[identity])
					if identity {
						require.NoError(t, keys.Add(ctx, "", k))
						credential[name] = func(r *http.Request) { r.Header.Set(acmeSession, "s:"+k.ID) }
						continue
					}
					secret := "sk-" + strings.ReplaceAll(k.ID, "-", "_") + "_0123456789"
					require.NoError(t, keys.Add(ctx, secret, k))
					credential[name] = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+secret) }
				}
				g := newDemo(t, func(c *gateway.Config) {
					c.Keys = keys
					c.Authenticators = acmeAuthenticators(keys)
				})
				saved := map[string]string{}
				for _, st := range tc.steps {
					path := st.path
					for name, id := range saved {
						path = strings.ReplaceAll(path, "{"+name+"}", id)
					}
					req := httptest.NewRequest(st.method, path, strings.NewReader(st.body))
					if st.body != "" {
						req.Header.Set("Content-Type", "application/json")
					}
					credential[st.as](req)
					w := httptest.NewRecorder()
					g.ServeHTTP(w, req)
					o := outcome{status: w.Code}
					if w.Code >= 400 {
						o.code = errorCode(t, w.Body.String())
					}
					runs[i] = append(runs[i], o)
					require.Equal(t, outcome{st.wantStatus, st.wantCode}, o, "identity %t: %s %s as %s: %s", identity, st.method, st.path, st.as, w.Body)
					if st.save != "" {
						var reply struct{ ID string }
						require.NoError(t, json.Unmarshal(w.Body.Bytes(), &reply))
						saved[st.save] = reply.ID
					}
				}
			}
			require.Equal(t, runs[0], runs[1], "an identity answers as an API key does")
		})
	}
}

// TestAnIdentityFillsTheTelemetry: the telemetry of a request of an
// identity names its key and counts its tokens, as for an API key, when
// its key is charged to the gateway's store.
func TestAnIdentityFillsTheTelemetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(ctx, "", auth.Key{ID: "user_ada", Owner: "ada", Quota: auth.UnlimitedQuota()}))
	g := newDemo(t, func(c *gateway.Config) {
		c.Keys = keys
		c.Authenticators = acmeAuthenticators(keys)
	})
	info := new(telemetry.Info)
	req := httptest.NewRequestWithContext(telemetry.NewContext(ctx, info), http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}`))
	req.Header.Set(acmeSession, "s:user_ada")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "user_ada", info.KeyID)
	require.Positive(t, info.InputTokens)
	require.Positive(t, info.OutputTokens)
}
