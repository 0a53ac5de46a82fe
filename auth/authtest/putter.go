package authtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// PutStore is a key store whose keys can be written: what
// [TestKeyPutter] checks.
type PutStore interface {
	auth.KeyStore
	auth.KeyPutter
}

// TestKeyPutter checks the auth.KeyPutter contract. newStore is called
// once per subtest and must return an empty store (key ids are random, so
// stores backed by one shared database can also run the suite). Subtests
// run in parallel. opts adapt the suite to a store that does not keep
// some fields ([WithoutFields]).
func TestKeyPutter(t *testing.T, newStore func(t *testing.T) PutStore, opts ...Option) {
	t.Helper()
	ctx := context.Background()
	o := newOptions(opts)

	secret := func(t *testing.T) string {
		t.Helper()
		return NewSeed(t, auth.Key{}).Secret
	}
	setup := func(t *testing.T) PutStore {
		t.Helper()
		s := newStore(t)
		require.NotNil(t, s, "newStore returned nil")
		return s
	}
	put := func(t *testing.T, s PutStore, secret string, k auth.Key) {
		t.Helper()
		require.NoError(t, s.PutKey(ctx, secret, k))
	}
	lookup := func(t *testing.T, s PutStore, secret string) *auth.Key {
		t.Helper()
		k, err := s.Lookup(ctx, secret)
		require.NoError(t, err)
		require.NotNil(t, k)
		return k
	}
	keyOpts := o.keyOpts()
	// granted checks the Granted of the key that secret finds.
	granted := func(t *testing.T, s PutStore, secret string, want int64) {
		t.Helper()
		if o.keeps(Granted) {
			require.Equal(t, want, lookup(t, s, secret).Granted, "Granted")
		}
	}

	t.Run("PutsANewKeyThatLookupFinds", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		k := auth.Key{
			ID:            newID(),
			Owner:         "acme",
			Quota:         auth.LimitedQuota(1000),
			ExpiresAt:     time.Now().Add(time.Hour).UTC().Truncate(time.Second),
			RateLimit:     &auth.Limit{Requests: 5, Period: time.Second},
			AllowedModels: []string{"demo-chat"},
		}
		put(t, s, sec, k)
		k.Granted = 1000 // the budget put
		if diff := cmp.Diff(&k, lookup(t, s, sec), keyOpts); diff != "" {
			t.Errorf("Lookup after PutKey mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("IgnoresTheUsageOfANewKey", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		put(t, s, sec, auth.Key{ID: newID(), Quota: auth.Quota{Remaining: 100, Used: 40, Reserved: 7}, Granted: 5})
		require.Equal(t, auth.Quota{Remaining: 100}, lookup(t, s, sec).Quota)
		granted(t, s, sec, 100)
	})

	t.Run("PuttingAgainKeepsTheUsageAndNeverRefundsIt", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		id := newID()
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(1000)})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 400})
		require.NoError(t, err)
		for _, tc := range []struct {
			budget int64
			want   auth.Quota
		}{
			{1000, auth.Quota{Remaining: 600, Used: 400}}, // a restart with the same file
			{2000, auth.Quota{Remaining: 1600, Used: 400}},
			{300, auth.Quota{Remaining: 0, Used: 400}},
		} {
			put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(tc.budget)})
			require.Equal(t, tc.want, lookup(t, s, sec).Quota, "budget %d", tc.budget)
			granted(t, s, sec, tc.budget) // lower than the usage too
		}
	})

	t.Run("PuttingAgainKeepsTheReservations", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		id := newID()
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		require.NoError(t, s.Reserve(ctx, id, 30))
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 30}, lookup(t, s, sec).Quota)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 30, Used: 10})
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 90, Used: 10}, q)
	})

	t.Run("SwitchingBetweenUnlimitedAndLimitedKeepsTheUsage", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		id := newID()
		put(t, s, sec, auth.Key{ID: id, Quota: auth.UnlimitedQuota()})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 100})
		require.NoError(t, err)
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(1000)})
		require.Equal(t, auth.Quota{Remaining: 900, Used: 100}, lookup(t, s, sec).Quota)
		granted(t, s, sec, 1000)
		put(t, s, sec, auth.Key{ID: id, Quota: auth.UnlimitedQuota(), Granted: 7})
		require.Equal(t, auth.Quota{Unlimited: true, Used: 100}, lookup(t, s, sec).Quota)
		granted(t, s, sec, 0)
	})

	t.Run("PuttingAgainUpdatesEveryOtherField", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		id := newID()
		put(t, s, sec, auth.Key{ID: id, Owner: "a", Quota: auth.UnlimitedQuota(), AllowedModels: []string{"m1"},
			RateLimit: &auth.Limit{Requests: 1, Period: time.Second}})
		next := auth.Key{ID: id, Owner: "b", Quota: auth.UnlimitedQuota(), Disabled: true,
			ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Second), AllowedModels: []string{"m2", "m3"}}
		put(t, s, sec, next)
		if diff := cmp.Diff(&next, lookup(t, s, sec), keyOpts); diff != "" {
			t.Errorf("Lookup after a second PutKey mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("ANewSecretForAStoredIDReplacesTheOld", func(t *testing.T) {
		t.Parallel()
		s, old, sec := setup(t), secret(t), secret(t)
		id := newID()
		put(t, s, old, auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 10})
		require.NoError(t, err)
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		_, err = s.Lookup(ctx, old)
		require.ErrorIs(t, err, auth.ErrKeyNotFound, "the old secret stops working")
		require.Equal(t, auth.Quota{Remaining: 90, Used: 10}, lookup(t, s, sec).Quota)
	})

	t.Run("ReturnsErrDuplicateKeyForASecretStoredUnderAnotherID", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		first := auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()}
		put(t, s, sec, first)
		err := s.PutKey(ctx, sec, auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
		require.ErrorIs(t, err, auth.ErrDuplicateKey)
		require.NotContains(t, err.Error(), sec, "errors never hold the secret")
		require.Equal(t, first.ID, lookup(t, s, sec).ID)
	})

	t.Run("PutsAKeyWithoutASecretThatNoSecretFinds", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		id := newID()
		put(t, s, "", auth.Key{ID: id, Owner: "acme", Quota: auth.LimitedQuota(30)})
		for _, sec := range []string{"", secret(t)} {
			_, err := s.Lookup(ctx, sec)
			require.ErrorIs(t, err, auth.ErrKeyNotFound, "Lookup(%q)", sec)
		}
		require.NoError(t, s.Reserve(ctx, id, 10), "it is charged by its id")
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 10, Used: 12})
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 18, Used: 12}, q)
	})

	t.Run("KeysWithoutASecretDoNotCollide", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		ids := []string{newID(), newID(), newID()}
		for _, id := range ids {
			put(t, s, "", auth.Key{ID: id, Quota: auth.LimitedQuota(5)})
		}
		for _, id := range ids {
			q, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 1})
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 4, Used: 1}, q, "key %s", id)
		}
	})

	t.Run("PuttingAKeyAgainWithoutASecretKeepsTheUsage", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		id := newID()
		put(t, s, "", auth.Key{ID: id, Quota: auth.LimitedQuota(30)})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 20})
		require.NoError(t, err)
		put(t, s, "", auth.Key{ID: id, Quota: auth.LimitedQuota(50)})
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: id})
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 30, Used: 20}, q, "the new budget less the usage")
	})

	t.Run("PuttingAKeyWithoutASecretRemovesItsSecret", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		id := newID()
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 10})
		require.NoError(t, err)
		put(t, s, "", auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		_, err = s.Lookup(ctx, sec)
		require.ErrorIs(t, err, auth.ErrKeyNotFound, "the secret stops working")
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(100)})
		require.Equal(t, auth.Quota{Remaining: 90, Used: 10}, lookup(t, s, sec).Quota, "a secret given again finds the key, its usage kept")
	})

	t.Run("RefusesAMalformedSecretOrAnEmptyID", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		const bad = "not a key"
		err := s.PutKey(ctx, bad, auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
		require.Error(t, err)
		require.NotContains(t, err.Error(), bad)
		require.Error(t, s.PutKey(ctx, secret(t), auth.Key{Quota: auth.UnlimitedQuota()}))
		require.Error(t, s.PutKey(ctx, "", auth.Key{Quota: auth.UnlimitedQuota()}), "an empty id without a secret")
	})

	t.Run("ConcurrentPutsLoseNoUsage", func(t *testing.T) {
		t.Parallel()
		s, sec := setup(t), secret(t)
		id := newID()
		put(t, s, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(1_000_000)})
		const n = 50
		var wg sync.WaitGroup
		errs := make(chan error, 2*n)
		for range n {
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 3})
				errs <- err
			}()
			go func() {
				defer wg.Done()
				errs <- s.PutKey(ctx, sec, auth.Key{ID: id, Quota: auth.LimitedQuota(1_000_000)})
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Equal(t, auth.Quota{Remaining: 1_000_000 - 3*n, Used: 3 * n}, lookup(t, s, sec).Quota)
	})
}
