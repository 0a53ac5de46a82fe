package auth_test

import (
	"context"
	"errors"
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

// The cache passes the optional capabilities through, and drops a key
// changed or deleted through it, so the suites hold with a long TTL.
func TestCachedKeyStoreKeyAdmin(t *testing.T) {
	authtest.TestKeyAdmin(t, func(t *testing.T) authtest.AdminStore {
		return auth.NewCachedKeyStore(auth.NewMemoryKeyStore(), time.Hour)
	})
}

func TestCachedKeyStoreIDLookup(t *testing.T) {
	authtest.TestIDLookup(t, func(t *testing.T) authtest.IDStore {
		return auth.NewCachedKeyStore(auth.NewMemoryKeyStore(), time.Hour)
	})
}

func TestCachedKeyStoreUsage(t *testing.T) {
	authtest.TestUsageReader(t, func(t *testing.T) authtest.UsageStore {
		return auth.NewCachedKeyStore(auth.NewMemoryKeyStore(), time.Hour)
	})
}

// lookupOnly is a KeyStore with no optional capability.
type lookupOnly struct{ auth.KeyStore }

func TestCachedKeyStoreReportsMissingCapabilities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := auth.NewCachedKeyStore(lookupOnly{auth.NewMemoryKeyStore()}, time.Hour)
	_, err := c.GetKey(ctx, "k")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = c.ListKeys(ctx, auth.ListKeysParams{})
	require.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = c.UpdateKey(ctx, "k", func(*auth.Key) error { return nil })
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorIs(t, c.DeleteKey(ctx, "k"), errors.ErrUnsupported)
	require.ErrorIs(t, c.PutKey(ctx, "sk-x", auth.Key{ID: "k"}), auth.ErrUnsupported)
	_, err = c.LookupID(ctx, "k")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	_, err = c.Usage(ctx, auth.UsageParams{})
	require.ErrorIs(t, err, errors.ErrUnsupported)
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
