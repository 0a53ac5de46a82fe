package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
)

func TestCachedKeyStoreConformance(t *testing.T) {
	authtest.TestKeyStore(t, func(t *testing.T, seeds []authtest.Seed) auth.KeyStore {
		s := auth.NewMemoryKeyStore()
		for _, sd := range seeds {
			require.NoError(t, s.Add(context.Background(), sd.Secret, sd.Key))
		}
		return auth.NewCachedKeyStore(s, time.Hour)
	})
}

func TestNewCachedKeyStorePanicsOnProgrammerError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		keys auth.KeyStore
		ttl  time.Duration
		want string
	}{
		{"NilStore", nil, time.Second, "auth: NewCachedKeyStore: nil KeyStore"},
		{"ZeroTTL", auth.NewMemoryKeyStore(), 0, "auth: NewCachedKeyStore: ttl must be positive"},
		{"NegativeTTL", auth.NewMemoryKeyStore(), -time.Second, "auth: NewCachedKeyStore: ttl must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.PanicsWithValue(t, tc.want, func() { auth.NewCachedKeyStore(tc.keys, tc.ttl) })
		})
	}
}
