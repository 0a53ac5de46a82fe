package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
)

func TestLoadFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json string
		wantErr    string // empty: no error
	}{
		{"keys and models", `{"keys":[{"secret":"sk-a","id":"a","quota":5}],"models":[{"id":"m","supported_endpoint_types":["compat"]}]}`, ""},
		{"unknown field", `{"keys":[],"modles":[]}`, `unknown field "modles"`},
		{"bad model", `{"models":[{"id":""}]}`, "id"},
		{"not json", `keys: []`, "invalid character"},
		{"route of an unlisted model", `{"models":[{"id":"m","supported_endpoint_types":["compat"]}],"routes":[{"model":"x","upstreams":[{"base_url":"http://127.0.0.1:1/v1"}]}]}`, `route "x"`},
		{"key and key_env", `{"models":[{"id":"m","supported_endpoint_types":["compat"]}],"routes":[{"model":"m","upstreams":[{"base_url":"http://127.0.0.1:1/v1","key":"a","key_env":"B"}]}]}`, "both key and key_env"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "gateway.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.json), 0o600))
			f, err := gateway.LoadFile(path)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.ErrorContains(t, err, path, "the error names the file")
				return
			}
			require.NoError(t, err)
			require.Len(t, f.Keys, 1)
			require.Equal(t, "m", f.Models[0].ID)
		})
	}
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
