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
