package auth

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// countingStore counts the Lookups and LookupIDs that reach a KeyStore.
type countingStore struct {
	*MemoryKeyStore
	lookups   atomic.Int64
	idLookups atomic.Int64
	during    func() // run after the key is read, before Lookup returns
}

func (s *countingStore) LookupID(ctx context.Context, id string) (*Key, error) {
	s.idLookups.Add(1)
	return s.MemoryKeyStore.LookupID(ctx, id)
}

func (s *countingStore) Lookup(ctx context.Context, secret string) (*Key, error) {
	s.lookups.Add(1)
	k, err := s.MemoryKeyStore.Lookup(ctx, secret)
	if s.during != nil {
		s.during()
	}
	return k, err
}

// cacheBundle is a CachedKeyStore with a clock the test moves, in front
// of a memory store holding one limited key.
type cacheBundle struct {
	mem    *MemoryKeyStore
	under  *countingStore
	cache  *CachedKeyStore
	now    time.Time
	secret string
	id     string
}

func setupCache(t *testing.T, ttl time.Duration) *cacheBundle {
	t.Helper()
	secret, err := NewSecret()
	require.NoError(t, err)
	b := &cacheBundle{mem: NewMemoryKeyStore(), now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), secret: secret, id: "key_1"}
	require.NoError(t, b.mem.Add(context.Background(), secret, Key{ID: b.id, Owner: "o", Quota: LimitedQuota(100)}))
	b.under = &countingStore{MemoryKeyStore: b.mem}
	b.cache = NewCachedKeyStore(b.under, ttl)
	b.cache.now = func() time.Time { return b.now }
	return b
}

func TestCachedKeyStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const ttl = 5 * time.Second
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, b *cacheBundle)
	}{
		{"ServesRepeatedLookupsFromMemory", func(t *testing.T, b *cacheBundle) {
			for range 10 {
				k, err := b.cache.Lookup(ctx, b.secret)
				require.NoError(t, err)
				require.Equal(t, b.id, k.ID)
			}
			require.Equal(t, int64(1), b.under.lookups.Load())
		}},
		{"ADisabledKeyStopsWorkingWithinTheTTL", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.NoError(t, b.mem.Disable(ctx, b.id))
			b.now = b.now.Add(ttl - time.Nanosecond)
			k, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.False(t, k.Disabled, "within the TTL the cached key is served")
			b.now = b.now.Add(time.Nanosecond)
			k, err = b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.True(t, k.Disabled, "once the TTL has passed the store is asked again")
		}},
		{"ForgetMakesAChangeSeenAtOnce", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.NoError(t, b.mem.Disable(ctx, b.id))
			b.cache.Forget(b.id)
			k, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.True(t, k.Disabled)
		}},
		{"UnknownSecretsAreNotCached", func(t *testing.T, b *cacheBundle) {
			secret, err := NewSecret()
			require.NoError(t, err)
			_, err = b.cache.Lookup(ctx, secret)
			require.ErrorIs(t, err, ErrKeyNotFound)
			require.NoError(t, b.mem.Add(ctx, secret, Key{ID: "key_2", Quota: UnlimitedQuota()}))
			k, err := b.cache.Lookup(ctx, secret)
			require.NoError(t, err, "a new key works at once")
			require.Equal(t, "key_2", k.ID)
		}},
		{"ReserveAndSettleThroughTheCacheShowInItsLookups", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.NoError(t, b.cache.Reserve(ctx, b.id, 30))
			k, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, Quota{Remaining: 100, Reserved: 30}, k.Quota)
			_, err = b.cache.Settle(ctx, SettleParams{KeyID: b.id, Reserved: 30, Used: 120})
			require.ErrorIs(t, err, ErrQuotaExceeded)
			k, err = b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, Quota{Remaining: 0, Used: 120}, k.Quota)
			require.True(t, k.Quota.Exhausted())
			require.Equal(t, int64(1), b.under.lookups.Load())
			require.ErrorIs(t, b.cache.Reserve(ctx, b.id, 1), ErrQuotaExceeded, "the store refuses what the cache would not know")
		}},
		{"AReservationMadeDuringALookupKeepsItsResultOutOfTheCache", func(t *testing.T, b *cacheBundle) {
			// The underlying Lookup reads the key, then a Reserve through
			// the cache ends before the Lookup returns: its snapshot may
			// miss the reservation, so it must not be cached.
			b.under.during = func() { require.NoError(t, b.cache.Reserve(ctx, b.id, 10)) }
			_, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			b.under.during = nil
			k, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, int64(2), b.under.lookups.Load(), "the first result was not cached")
			require.Equal(t, int64(10), k.Quota.Reserved)
			_, err = b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, int64(2), b.under.lookups.Load(), "the second was")
		}},
		{"ServesRepeatedLookupsByIDFromMemory", func(t *testing.T, b *cacheBundle) {
			require.NoError(t, b.mem.Add(ctx, "", Key{ID: "user_1", Quota: LimitedQuota(30)}))
			for range 10 {
				k, err := b.cache.LookupID(ctx, "user_1")
				require.NoError(t, err)
				require.Equal(t, "user_1", k.ID)
			}
			require.Equal(t, int64(1), b.under.idLookups.Load())
		}},
		{"AKeyFoundByIDIsDisabledWithinTheTTL", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.NoError(t, b.mem.Disable(ctx, b.id))
			b.now = b.now.Add(ttl - time.Nanosecond)
			k, err := b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.False(t, k.Disabled, "within the TTL the cached key is served")
			got, err := b.cache.GetKey(ctx, b.id)
			require.NoError(t, err)
			require.True(t, got.Disabled, "GetKey, an admin's read, is never cached")
			b.now = b.now.Add(time.Nanosecond)
			k, err = b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.True(t, k.Disabled, "once the TTL has passed the store is asked again")
		}},
		{"LookupIDServesAKeyFoundByItsSecret", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			k, err := b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.Equal(t, b.id, k.ID)
			require.Zero(t, b.under.idLookups.Load())
			_, err = b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, int64(1), b.under.lookups.Load(), "and the entry still serves its secret")
		}},
		{"ALookupBySecretAfterOneByIDAsksTheStore", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			_, err = b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, int64(1), b.under.lookups.Load(), "an id does not tell a secret")
			_, err = b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			_, err = b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.Equal(t, int64(1), b.under.lookups.Load())
			require.Equal(t, int64(1), b.under.idLookups.Load())
		}},
		{"UnknownIDsAreNotCached", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.LookupID(ctx, "user_1")
			require.ErrorIs(t, err, ErrKeyNotFound)
			require.NoError(t, b.mem.Add(ctx, "", Key{ID: "user_1", Quota: UnlimitedQuota()}))
			k, err := b.cache.LookupID(ctx, "user_1")
			require.NoError(t, err, "a new key works at once")
			require.Equal(t, "user_1", k.ID)
		}},
		{"ReserveAndSettleThroughTheCacheShowInItsLookupsByID", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.NoError(t, b.cache.Reserve(ctx, b.id, 30))
			_, err = b.cache.Settle(ctx, SettleParams{KeyID: b.id, Reserved: 30, Used: 100})
			require.NoError(t, err)
			k, err := b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			require.Equal(t, Quota{Remaining: 0, Used: 100}, k.Quota)
			require.Equal(t, int64(1), b.under.idLookups.Load())
		}},
		{"EntriesFoundByIDAreSweptAway", func(t *testing.T, b *cacheBundle) {
			require.NoError(t, b.mem.Add(ctx, "", Key{ID: "user_1", Quota: UnlimitedQuota()}))
			_, err := b.cache.LookupID(ctx, "user_1")
			require.NoError(t, err)
			b.now = b.now.Add(2 * ttl)
			_, err = b.cache.LookupID(ctx, b.id)
			require.NoError(t, err)
			b.cache.mu.Lock()
			defer b.cache.mu.Unlock()
			require.Len(t, b.cache.byID, 1)
			require.Contains(t, b.cache.byID, b.id)
			require.Empty(t, b.cache.byHash)
		}},
		{"ExpiredEntriesAreSweptAway", func(t *testing.T, b *cacheBundle) {
			_, err := b.cache.Lookup(ctx, b.secret)
			require.NoError(t, err)
			secret, err := NewSecret()
			require.NoError(t, err)
			require.NoError(t, b.mem.Add(ctx, secret, Key{ID: "key_2", Quota: UnlimitedQuota()}))
			b.now = b.now.Add(2 * ttl)
			_, err = b.cache.Lookup(ctx, secret)
			require.NoError(t, err)
			b.cache.mu.Lock()
			defer b.cache.mu.Unlock()
			require.Len(t, b.cache.byHash, 1)
			require.Contains(t, b.cache.byID, "key_2")
			require.Empty(t, b.cache.changed)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, setupCache(t, ttl))
		})
	}
}
