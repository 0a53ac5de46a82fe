package authtest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// IDStore is a key store whose keys can be written (auth.KeyPutter) and
// found by id (auth.IDLookup): what [TestIDLookup] checks.
type IDStore interface {
	auth.KeyStore
	auth.KeyPutter
	auth.IDLookup
}

// TestIDLookup checks the auth.IDLookup contract, on which
// auth.Identities authenticates an embedder's own identity as a key.
// newStore is called once per subtest and must return an empty store
// (key ids are random, so stores backed by one shared database can also
// run the suite); the subtests create keys with PutKey, with and without
// a secret. Subtests run in parallel. opts adapt the suite to a store
// that does not keep some fields ([WithoutFields]).
func TestIDLookup(t *testing.T, newStore func(t *testing.T) IDStore, opts ...Option) {
	t.Helper()
	ctx := context.Background()
	o := newOptions(opts)
	keyOpts := o.keyOpts()
	setup := func(t *testing.T) IDStore {
		t.Helper()
		s := newStore(t)
		require.NotNil(t, s, "newStore returned nil")
		return s
	}
	put := func(t *testing.T, s IDStore, secret string, k auth.Key) {
		t.Helper()
		require.NoError(t, s.PutKey(ctx, secret, k))
	}
	lookup := func(t *testing.T, s IDStore, id string) *auth.Key {
		t.Helper()
		k, err := s.LookupID(ctx, id)
		require.NoError(t, err)
		require.NotNil(t, k)
		return k
	}

	t.Run("FindsAKeyWithoutASecretByItsID", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		k := auth.Key{
			ID:            newID(),
			Owner:         "user_1",
			Quota:         auth.Quota{Remaining: 30, BudgetUSD: 2},
			ExpiresAt:     time.Now().Add(time.Hour).UTC().Truncate(time.Second),
			RateLimit:     &auth.Limit{Requests: 5, Period: time.Second},
			AllowedModels: []string{"demo-chat"},
		}
		put(t, s, "", k)
		k.Granted = 30 // the budget put
		if diff := cmp.Diff(&k, lookup(t, s, k.ID), keyOpts); diff != "" {
			t.Errorf("LookupID mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("FindsAKeyWithASecretByItsIDToo", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		k := auth.Key{ID: newID(), Owner: "acme", Quota: auth.UnlimitedQuota()}
		put(t, s, NewSeed(t, k).Secret, k)
		if diff := cmp.Diff(&k, lookup(t, s, k.ID), keyOpts); diff != "" {
			t.Errorf("LookupID mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("ReturnsErrKeyNotFoundForAnUnknownID", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		put(t, s, "", auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
		_, err := s.LookupID(ctx, newID())
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
	})

	t.Run("ReturnsDisabledAndExpiredKeysAsTheyAre", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		disabled := auth.Key{ID: newID(), Quota: auth.UnlimitedQuota(), Disabled: true}
		put(t, s, "", disabled)
		require.True(t, lookup(t, s, disabled.ID).Disabled)
		if o.keeps(ExpiresAt) {
			expired := auth.Key{ID: newID(), Quota: auth.UnlimitedQuota(), ExpiresAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second)}
			put(t, s, "", expired)
			require.True(t, lookup(t, s, expired.ID).Expired(time.Now()))
		}
	})

	t.Run("ReportsReservationsAndUsage", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		id := newID()
		put(t, s, "", auth.Key{ID: id, Quota: auth.LimitedQuota(30)})
		require.NoError(t, s.Reserve(ctx, id, 10))
		require.Equal(t, auth.Quota{Remaining: 30, Reserved: 10}, lookup(t, s, id).Quota)
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 10, Used: 30})
		require.NoError(t, err)
		got := lookup(t, s, id).Quota
		require.Equal(t, auth.Quota{Remaining: 0, Used: 30}, got)
		require.True(t, got.Exhausted(), "spent: the middleware refuses it")
		require.ErrorIs(t, s.Reserve(ctx, id, 1), auth.ErrQuotaExceeded)
	})

	t.Run("SeesAKeyPutAgain", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		id := newID()
		put(t, s, "", auth.Key{ID: id, Owner: "a", Quota: auth.UnlimitedQuota()})
		require.Equal(t, "a", lookup(t, s, id).Owner)
		put(t, s, "", auth.Key{ID: id, Owner: "b", Quota: auth.UnlimitedQuota(), Disabled: true})
		k := lookup(t, s, id)
		require.Equal(t, "b", k.Owner)
		require.True(t, k.Disabled)
	})

	t.Run("ReturnsAKeyThatIsTheCallers", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		id := newID()
		put(t, s, "", auth.Key{ID: id, Quota: auth.LimitedQuota(30), AllowedModels: []string{"m"}})
		k := lookup(t, s, id)
		k.Quota.Remaining, k.AllowedModels[0], k.Disabled = 0, "other", true
		again := lookup(t, s, id)
		require.Equal(t, int64(30), again.Quota.Remaining)
		require.Equal(t, []string{"m"}, again.AllowedModels)
		require.False(t, again.Disabled)
	})
}
