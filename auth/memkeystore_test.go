package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
)

func TestMemoryKeyStore(t *testing.T) {
	t.Parallel()
	authtest.TestKeyStore(t, func(t *testing.T, seeds []authtest.Seed) auth.KeyStore {
		s := auth.NewMemoryKeyStore()
		for _, sd := range seeds {
			require.NoError(t, s.Add(context.Background(), sd.Secret, sd.Key))
		}
		return s
	})
}

func TestMemoryKeyStorePutKey(t *testing.T) {
	t.Parallel()
	authtest.TestKeyPutter(t, func(t *testing.T) authtest.PutStore { return auth.NewMemoryKeyStore() })
}

func TestMemoryKeyStoreIDLookup(t *testing.T) {
	authtest.TestIDLookup(t, func(t *testing.T) authtest.IDStore { return auth.NewMemoryKeyStore() })
}

func TestMemoryKeyStoreKeyAdmin(t *testing.T) {
	authtest.TestKeyAdmin(t, func(t *testing.T) authtest.AdminStore { return auth.NewMemoryKeyStore() })
}

func TestMemoryKeyStoreUsage(t *testing.T) {
	authtest.TestUsageReader(t, func(t *testing.T) authtest.UsageStore { return auth.NewMemoryKeyStore() })
}

func TestMemoryLimiter(t *testing.T) {
	t.Parallel()
	authtest.TestLimiter(t, func(t *testing.T, now func() time.Time) auth.Limiter {
		return auth.NewMemoryLimiter(&auth.MemoryLimiterOptions{Now: now})
	})
}

func TestMemoryKeyStoreAdd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	setup := func(t *testing.T) (*auth.MemoryKeyStore, string) {
		t.Helper()
		s := auth.NewMemoryKeyStore()
		secret := authtest.NewSeed(t, auth.Key{}).Secret
		require.NoError(t, s.Add(ctx, secret, auth.Key{ID: "key_1", Quota: auth.UnlimitedQuota()}))
		return s, secret
	}

	t.Run("RefusesADuplicateID", func(t *testing.T) {
		t.Parallel()
		s, _ := setup(t)
		other := authtest.NewSeed(t, auth.Key{}).Secret
		require.ErrorIs(t, s.Add(ctx, other, auth.Key{ID: "key_1"}), auth.ErrDuplicateKey)
	})

	t.Run("RefusesADuplicateSecret", func(t *testing.T) {
		t.Parallel()
		s, secret := setup(t)
		err := s.Add(ctx, secret, auth.Key{ID: "key_2"})
		require.ErrorIs(t, err, auth.ErrDuplicateKey)
		require.NotContains(t, err.Error(), secret)
	})

	t.Run("RefusesAMalformedSecretWithoutEchoingIt", func(t *testing.T) {
		t.Parallel()
		s := auth.NewMemoryKeyStore()
		for _, secret := range []string{"sk-", "pk-abc", "sk-a b", "sk-é", " "} {
			err := s.Add(ctx, secret, auth.Key{ID: "key_x"})
			require.ErrorIs(t, err, auth.ErrMalformedCredential)
			if len(secret) > 3 {
				require.NotContains(t, err.Error(), secret)
			}
		}
	})

	t.Run("AddsAKeyWithoutASecretThatOnlyItsIDFinds", func(t *testing.T) {
		t.Parallel()
		s, secret := setup(t)
		require.NoError(t, s.Add(ctx, "", auth.Key{ID: "user_1", Quota: auth.LimitedQuota(30)}))
		require.NoError(t, s.Add(ctx, "", auth.Key{ID: "user_2", Quota: auth.LimitedQuota(30)}), "keys without secrets do not collide")
		require.ErrorIs(t, s.Add(ctx, "", auth.Key{ID: "key_1"}), auth.ErrDuplicateKey, "ids still do")
		k, err := s.LookupID(ctx, "user_1")
		require.NoError(t, err)
		require.Equal(t, auth.LimitedQuota(30), k.Quota)
		_, err = s.Lookup(ctx, "")
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
		k, err = s.Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, "key_1", k.ID, "the key with a secret is unchanged")
	})

	t.Run("RefusesAnEmptyID", func(t *testing.T) {
		t.Parallel()
		s := auth.NewMemoryKeyStore()
		require.Error(t, s.Add(ctx, authtest.NewSeed(t, auth.Key{}).Secret, auth.Key{}))
	})

	t.Run("CopiesTheKey", func(t *testing.T) {
		t.Parallel()
		s := auth.NewMemoryKeyStore()
		secret := authtest.NewSeed(t, auth.Key{}).Secret
		k := auth.Key{ID: "key_1", AllowedModels: []string{"a"}, RateLimit: &auth.Limit{Requests: 1}}
		require.NoError(t, s.Add(ctx, secret, k))
		k.AllowedModels[0] = "z"
		k.RateLimit.Requests = 9
		got, err := s.Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, []string{"a"}, got.AllowedModels)
		require.Equal(t, 1, got.RateLimit.Requests)
	})

	t.Run("DisableMarksTheKeyDisabled", func(t *testing.T) {
		t.Parallel()
		s, secret := setup(t)
		require.NoError(t, s.Disable(ctx, "key_1"))
		got, err := s.Lookup(ctx, secret)
		require.NoError(t, err)
		require.True(t, got.Disabled)
	})

	t.Run("DisableReturnsErrKeyNotFoundForAnUnknownID", func(t *testing.T) {
		t.Parallel()
		s, _ := setup(t)
		require.ErrorIs(t, s.Disable(ctx, "key_nope"), auth.ErrKeyNotFound)
	})

	t.Run("ReserveAndSettleRefuseANegativeAmount", func(t *testing.T) {
		t.Parallel()
		s, secret := setup(t)
		require.Error(t, s.Reserve(ctx, "key_1", -1))
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: -1})
		require.Error(t, err)
		_, err = s.Settle(ctx, auth.SettleParams{KeyID: "key_1", Reserved: -1})
		require.Error(t, err)
		got, err := s.Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, auth.UnlimitedQuota(), got.Quota)
	})
}

func TestMemoryLimiterEvictsFullBuckets(t *testing.T) {
	t.Parallel()
	clock := authtest.NewClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	l := auth.NewMemoryLimiter(&auth.MemoryLimiterOptions{Now: clock.Now, SweepInterval: time.Minute})
	ctx := context.Background()
	limit := auth.Limit{Requests: 10, Period: 10 * time.Second}
	for _, k := range []string{"a", "b", "c"} {
		_, err := l.Allow(ctx, k, limit)
		require.NoError(t, err)
	}
	long := auth.Limit{Requests: 1, Period: time.Hour}
	_, err := l.Allow(ctx, "busy", long)
	require.NoError(t, err)
	require.Equal(t, 4, l.Len())

	clock.Advance(59 * time.Second) // before the sweep interval: nothing evicted
	_, err = l.Allow(ctx, "d", limit)
	require.NoError(t, err)
	require.Equal(t, 5, l.Len())

	clock.Advance(time.Second) // a, b, c and d are full again; busy is not
	_, err = l.Allow(ctx, "e", limit)
	require.NoError(t, err)
	require.Equal(t, 2, l.Len(), "busy and e remain")

	d, err := l.Allow(ctx, "busy", long)
	require.NoError(t, err)
	require.False(t, d.Allowed, "an unfinished bucket must survive the sweep")
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool)
	for range 100 {
		s, err := auth.NewSecret()
		require.NoError(t, err)
		require.True(t, auth.ValidSecret(s), "NewSecret() = malformed key")
		require.Len(t, s, 46)
		require.False(t, seen[s], "NewSecret repeated itself")
		seen[s] = true
	}
}
