package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

func TestLoadFile(t *testing.T) {
	t.Parallel()
	const models = `"models":[{"id":"m","supported_endpoint_types":["compat"]}]`
	route := func(upstream string) string {
		return `{` + models + `,"routes":[{"model":"m","upstreams":[` + upstream + `]}]}`
	}
	tests := []struct {
		name, json string
		wantErr    []string // substrings of the error; none: no error
	}{
		{"keys and models", `{"keys":[{"secret":"sk-a","id":"a","quota":5}],` + models + `}`, nil},
		{"every key field", `{"rate_limit":"20/s","keys":[{"secret":"sk-a","id":"a","quota":null,"rate_limit":"5/s",
			"allowed_models":["m"],"expires_at":"2030-01-02T03:04:05Z","disabled":true}],` + models + `}`, nil},
		{"pricing and a budget", `{"keys":[{"secret":"sk-a","budget_usd":12.5}],"models":[{"id":"m","supported_endpoint_types":["compat"],
			"pricing":{"input_per_million":0.15,"output_per_million":0.6}}]}`, nil},
		{"negative price", `{"models":[{"id":"m","supported_endpoint_types":["compat"],"pricing":{"output_per_million":-1}}]}`,
			[]string{"pricing.output_per_million: -1 is not a price"}},
		{"unknown price field", `{"models":[{"id":"m","supported_endpoint_types":["compat"],"pricing":{"input":1}}]}`, []string{`unknown field "input"`}},
		{"negative budget", `{"keys":[{"secret":"sk-a","budget_usd":-1}]}`, []string{"keys[0].budget_usd: -1 is not a budget"}},
		{"a route", route(`{"base_url":"https://api.example.com/v1","key_env":"K"}`), nil},
		{"a base_url with a trailing slash", route(`{"base_url":"http://10.0.0.7:8000/api/v1/","key":"sk-up"}`), nil},
		{"an anthropic upstream", route(`{"base_url":"https://api.anthropic.com/v1","key":"sk-up","api":"anthropic"}`), nil},
		{"unknown api", route(`{"base_url":"https://api.example.com/v1","key":"sk-up","api":"grpc"}`), []string{`routes[0].upstreams[0].api: unknown API "grpc"`}},

		{"unknown field", `{"keys":[],"modles":[]}`, []string{`unknown field "modles"`}},
		{"bad model", `{"models":[{"id":""}]}`, []string{"id"}},
		{"empty file", ``, []string{"empty file"}},
		{"not json", `keys: []`, []string{":1:1: invalid character 'k'"}},
		{"syntax error on line 3", "{\n  \"keys\": [\n    {\"secret\": \"sk-a\",, \"id\": \"a\"}\n  ]\n}", []string{":3:23: invalid character ','"}},
		{"type error", "{\n\"keys\": [{\"secret\": \"sk-a\", \"quota\": \"lots\"}]}", []string{":2:43:", "keys.quota", "string"}},
		{"duplicate member", "{\"keys\": [{\"secret\": \"sk-a\",\n  \"quota\": 5,\n  \"quota\": 500}]}", []string{":3:3: keys[0].quota: given twice"}},
		{"duplicate top-level member", `{"keys":[],"keys":[]}`, []string{":1:12: keys: given twice"}},
		{"duplicate member of a model", `{"models":[{"id":"m","id":"n","supported_endpoint_types":["compat"]}]}`, []string{"models[0].id: given twice"}},
		{"data after the object", `{"keys":[]} {}`, []string{"data after the top-level object"}},
		{"negative quota", `{"keys":[{"secret":"sk-a","quota":-5}]}`, []string{"keys[0].quota: -5 is negative"}},
		{"malformed secret", `{"keys":[{"secret":"sk-…"}]}`, []string{"keys[0].secret: not a well-formed key"}},
		{"duplicate key id", `{"keys":[{"secret":"sk-a","id":"a"},{"secret":"sk-b","id":"a"}]}`, []string{`keys[1].id: "a" is already the id of keys[0]`}},
		{"bad rate limit", `{"keys":[{"secret":"sk-a",` + "\n" + `"rate_limit":"5 per second"}]}`, []string{`:2:14: keys[0].rate_limit: auth: rate limit "5 per second"`}},
		{"bad default rate limit", `{"rate_limit":"0/s"}`, []string{`:1:15: rate_limit: auth: rate limit "0/s"`}},
		{"bad rate limit and a later duplicate", `{"rate_limit":"0/s","keys":[],"keys":[]}`, []string{`:1:15: rate_limit:`}},
		{"allowed model not listed", `{"keys":[{"secret":"sk-a","allowed_models":["x"]}],` + models + `}`, []string{`keys[0].allowed_models[0]: "x" is not in models`}},
		{"bad expiry", `{"keys":[{"secret":"sk-a","expires_at":"tomorrow"}]}`, []string{`:1:40: keys[0].expires_at: "tomorrow" is not an RFC 3339 time`}},
		{"expiry of the wrong type", `{"keys":[{"secret":"sk-a","expires_at":5}]}`, []string{":1:40: keys[0].expires_at: want a string"}},
		{"rate limit of the wrong type", `{"rate_limit":5}`, []string{":1:15: rate_limit: want a string"}},
		{"null rate limit", `{"rate_limit":null,"keys":[{"secret":"sk-a","rate_limit":null,"expires_at":null}],` + models + `}`, nil},
		{"route of an unlisted model", `{` + models + `,"routes":[{"model":"x","upstreams":[{"base_url":"http://127.0.0.1:1/v1","key":"k"}]}]}`, []string{`routes[0].model: "x" is not in models`}},
		{"duplicate secret", `{"keys":[{"secret":"sk-a","id":"a"},{"secret":"sk-a","id":"b"}]}`, []string{"keys[1].secret: the same secret as keys[0]"}},
		{"model routed twice", `{` + models + `,"routes":[{"model":"m","upstreams":[{"base_url":"http://h/v1","key":"k"}]},{"model":"m","upstreams":[{"base_url":"http://h/v1","key":"k"}]}]}`, []string{`routes[1].model: "m" is already routed by routes[0]`}},
		{"base_url with a password", route(`{"base_url":"https://user:hunter2@api.example.com/","key_env":"K"}`), []string{"routes[0].upstreams[0].base_url", "must end in /v1", "xxxxx"}},
		{"route without upstreams", `{` + models + `,"routes":[{"model":"m","upstreams":[]}]}`, []string{"routes[0].upstreams: route \"m\" has no upstream"}},
		{"key and key_env", route(`{"base_url":"http://127.0.0.1:1/v1","key":"a","key_env":"B"}`), []string{"routes[0].upstreams[0]: both key and key_env"}},
		{"no key", route(`{"base_url":"http://127.0.0.1:1/v1"}`), []string{"routes[0].upstreams[0]: no key"}},
		{"base_url not ending in /v1", route(`{"base_url":"https://api.openai.com","key_env":"K"}`), []string{`routes[0].upstreams[0].base_url: "https://api.openai.com" must end in /v1`}},
		{"base_url with a longer path", route(`{"base_url":"https://api.openai.com/v1/chat","key_env":"K"}`), []string{"routes[0].upstreams[0].base_url", "must end in /v1"}},
		{"gemini base_url ending in /v1beta", route(`{"base_url":"https://generativelanguage.googleapis.com/v1beta","key":"k","api":"gemini"}`), nil},
		{"gemini base_url ending in /v1", route(`{"base_url":"http://127.0.0.1:1/v1","key":"k","api":"gemini"}`), nil},
		{"gemini base_url ending elsewhere", route(`{"base_url":"https://generativelanguage.googleapis.com","key":"k","api":"gemini"}`), []string{"routes[0].upstreams[0].base_url", "must end in /v1beta or /v1"}},
		{"openai base_url ending in /v1beta", route(`{"base_url":"https://api.example.com/v1beta","key":"k"}`), []string{"routes[0].upstreams[0].base_url", "must end in /v1,"}},
		{"base_url not a URL", route(`{"base_url":"api.openai.com/v1","key_env":"K"}`), []string{"routes[0].upstreams[0].base_url", "absolute http(s) URL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "gateway.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.json), 0o600))
			f, err := gateway.LoadFile(path)
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				require.True(t, strings.HasPrefix(err.Error(), path), "the error starts with the file: %v", err)
				for _, want := range tc.wantErr {
					require.ErrorContains(t, err, want)
				}
				require.NotContains(t, err.Error(), "sk-a", "no secret in errors")
				require.NotContains(t, err.Error(), "hunter2", "no password in errors")
				return
			}
			require.NoError(t, err)
			require.Equal(t, "m", f.Models[0].ID)
		})
	}
}

// TestLoadFileKeys reads every field of a key into the key store.
func TestLoadFileKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
	  "rate_limit": "20/s",
	  "keys": [
	    {"secret": "sk-a", "id": "a", "owner": "o", "quota": 100, "rate_limit": "5/m",
	     "allowed_models": ["m"], "expires_at": "2030-01-02T03:04:05+01:00", "disabled": true},
	    {"secret": "sk-b", "id": "b", "rate_limit": "unlimited"},
	    {"secret": "sk-c", "id": "c"}
	  ],
	  "models": [{"id": "m", "supported_endpoint_types": ["compat"]}]
	}`), 0o600))
	f, err := gateway.LoadFile(path)
	require.NoError(t, err)
	require.Equal(t, auth.Limit{Requests: 20, Period: time.Second}, f.RateLimit)
	keys, err := gateway.NewKeyStore(ctx, f.Keys)
	require.NoError(t, err)

	got, err := keys.Lookup(ctx, "sk-a")
	require.NoError(t, err)
	want := &auth.Key{ID: "a", Owner: "o", Quota: auth.LimitedQuota(100), Granted: 100,
		RateLimit:     &auth.Limit{Requests: 5, Period: time.Minute},
		AllowedModels: []string{"m"},
		ExpiresAt:     time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC),
		Disabled:      true}
	require.False(t, got.CreatedAt.IsZero(), "the store sets the creation time")
	want.CreatedAt = got.CreatedAt
	require.Empty(t, cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })))

	got, err = keys.Lookup(ctx, "sk-b")
	require.NoError(t, err)
	require.NotNil(t, got.RateLimit)
	require.True(t, got.RateLimit.Unlimited(), `"unlimited" opts out of the default`)
	got, err = keys.Lookup(ctx, "sk-c")
	require.NoError(t, err)
	require.Nil(t, got.RateLimit, "absent: the default applies")
}

func TestNewKeyStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	keys, err := gateway.NewKeyStore(ctx, gateway.DemoKeys())
	require.NoError(t, err)

	k, err := keys.Lookup(ctx, "sk-demo")
	require.NoError(t, err)
	require.Equal(t, "key-demo", k.ID)
	require.True(t, k.Quota.Unlimited)

	k, err = keys.Lookup(ctx, "sk-demo-empty")
	require.NoError(t, err)
	require.False(t, k.Quota.Unlimited)
	require.Zero(t, k.Quota.Remaining)

	_, err = gateway.NewKeyStore(ctx, []gateway.KeyConfig{{Secret: "sk-x"}, {Secret: "sk-x"}})
	require.Error(t, err, "a duplicate secret is refused")
	_, err = gateway.NewKeyStore(ctx, []gateway.KeyConfig{{ID: "no-secret"}})
	require.ErrorIs(t, err, auth.ErrMalformedCredential, "a key of a file is an API key: its secret is required")
	_, err = keys.Lookup(ctx, "sk-unknown")
	require.ErrorIs(t, err, auth.ErrKeyNotFound)
}

func TestFileRelay(t *testing.T) {
	// Not parallel: it sets an environment variable.
	f := gateway.File{Routes: []gateway.RouteConfig{{Model: "m", Upstreams: []gateway.UpstreamConfig{
		{BaseURL: "http://127.0.0.1:1/v1", KeyEnv: "GATEWAYKIT_TEST_UPSTREAM_KEY", Model: "upstream-m"},
		{BaseURL: "http://127.0.0.1:2/v1", Key: "sk-inline"},
	}}}}
	_, err := f.Relay()
	require.ErrorContains(t, err, "GATEWAYKIT_TEST_UPSTREAM_KEY")

	t.Setenv("GATEWAYKIT_TEST_UPSTREAM_KEY", "sk-from-env")
	r, err := f.Relay()
	require.NoError(t, err)
	require.True(t, r.Serves("m"))
	ups := r.Upstreams("m")
	require.Len(t, ups, 2)
	require.Equal(t, "sk-from-env", ups[0].Key)
	require.Equal(t, "upstream-m", ups[0].Model)
	require.Equal(t, "sk-inline", ups[1].Key)
	require.Equal(t, "m", ups[1].Model, "an empty upstream name is the public one")

	r, err = gateway.File{}.Relay()
	require.NoError(t, err)
	require.Nil(t, r, "no routes, no relay")
}

// TestPutKeysKeepsTheUsageOfARestart puts the keys of a file into a store
// twice, as two starts of a gateway on one durable store do: the second
// takes the limits of the file and keeps the usage, refunding nothing.
func TestPutKeysKeepsTheUsageOfARestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	budget := int64(1000)
	keys := []gateway.KeyConfig{{Secret: "sk-team-a-example", ID: "team-a", Quota: &budget}}
	s := auth.NewMemoryKeyStore()
	require.NoError(t, gateway.PutKeys(ctx, s, keys))
	_, err := s.Settle(ctx, auth.SettleParams{KeyID: "team-a", Used: 400})
	require.NoError(t, err)

	require.NoError(t, gateway.PutKeys(ctx, s, keys), "the second start")
	k, err := s.Lookup(ctx, "sk-team-a-example")
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 600, Used: 400}, k.Quota)

	twice := append(keys, gateway.KeyConfig{Secret: "sk-team-b-example", ID: "team-a"})
	require.ErrorIs(t, gateway.PutKeys(ctx, s, twice), auth.ErrDuplicateKey)
}

// TestLoadFilePricesAndBudgets reads a model's pricing and a key's budget
// in US dollars into the catalogue and the key store.
func TestLoadFilePricesAndBudgets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
	  "keys": [{"secret": "sk-a", "id": "a", "budget_usd": 2.5}],
	  "models": [{"id": "m", "supported_endpoint_types": ["compat"],
	    "pricing": {"input_per_million": 0.15, "output_per_million": 0.6}}]
	}`), 0o600))
	f, err := gateway.LoadFile(path)
	require.NoError(t, err)
	require.Equal(t, &models.Pricing{InputPerMillion: 0.15, OutputPerMillion: 0.6}, f.Models[0].Pricing)
	require.InDelta(t, 0.15+0.6, f.Models[0].Pricing.Cost(1_000_000, 1_000_000), 1e-12)
	keys, err := gateway.NewKeyStore(ctx, f.Keys)
	require.NoError(t, err)
	k, err := keys.Lookup(ctx, "sk-a")
	require.NoError(t, err)
	require.Equal(t, 2.5, k.Quota.BudgetUSD)
}
