// Package authtest holds the conformance suites of the auth package's
// interfaces, for the implementations in this repository and for
// embedders' own: run [TestKeyStore] against a KeyStore, [TestKeyPutter]
// against one whose keys can be written (auth.KeyPutter), [TestIDLookup],
// [TestKeyAdmin] and [TestUsageReader] against one with those
// capabilities, and
// [TestLimiter] against a Limiter from an ordinary test.
//
// A store that does not keep some fields of a key (its expiry, rate
// limit, budget in money, or granted quota) says so with [WithoutFields]:
// the cases that need those fields are skipped, and the others compare
// keys without them. A store that drops a field without saying so fails
// the cases that read it.
//
//	func TestSQLKeyStore(t *testing.T) {
//		authtest.TestKeyStore(t, func(t *testing.T, seeds []authtest.Seed) auth.KeyStore {
//			s := newSQLStore(t) // an empty store, private to this subtest
//			for _, sd := range seeds {
//				insertKey(t, s, auth.HashSecret(sd.Secret), sd.Key)
//			}
//			return s
//		}, authtest.WithoutFields(authtest.BudgetUSD)) // if it keeps no budgets in money
//	}
package authtest

import (
	"context"
	"crypto/rand"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// Seed is a key that the suite asks a store under test to hold, with the
// secret that must find it.
type Seed struct {
	Secret string
	Key    auth.Key
}

// NewSeed returns a seed for k with a fresh secret from auth.NewSecret.
func NewSeed(t testing.TB, k auth.Key) Seed {
	t.Helper()
	secret, err := auth.NewSecret()
	require.NoError(t, err)
	return Seed{Secret: secret, Key: k}
}

// TestKeyStore checks the auth.KeyStore contract. newStore is called once
// per subtest, with the keys the subtest needs, and must return a store
// that holds exactly those keys (key ids are random, so stores backed by
// one shared database can also run the suite). Subtests run in parallel.
// Keys are compared without their Granted (see [TestKeyPutter]); opts
// adapt the suite to a store that does not keep some fields
// ([WithoutFields]).
func TestKeyStore(t *testing.T, newStore func(t *testing.T, seeds []Seed) auth.KeyStore, opts ...Option) {
	t.Helper()
	ctx := context.Background()
	o := newOptions(opts)

	// setup seeds keys and returns the store and the seeds.
	setup := func(t *testing.T, keys ...auth.Key) (auth.KeyStore, []Seed) {
		t.Helper()
		seeds := make([]Seed, len(keys))
		for i, k := range keys {
			seeds[i] = NewSeed(t, k)
		}
		s := newStore(t, seeds)
		require.NotNil(t, s, "newStore returned nil")
		return s, seeds
	}
	limited := func(remaining int64) auth.Key {
		return auth.Key{ID: newID(), Owner: "owner", Quota: auth.LimitedQuota(remaining)}
	}
	unlimited := func() auth.Key {
		return auth.Key{ID: newID(), Owner: "owner", Quota: auth.UnlimitedQuota()}
	}
	lookup := func(t *testing.T, s auth.KeyStore, secret string) *auth.Key {
		t.Helper()
		k, err := s.Lookup(ctx, secret)
		require.NoError(t, err)
		require.NotNil(t, k)
		return k
	}
	// consume settles usage without a reservation, as auth.Charge does.
	consume := func(s auth.KeyStore, keyID string, amount int64) (auth.Quota, error) {
		return s.Settle(ctx, auth.SettleParams{KeyID: keyID, Used: amount})
	}
	// keyOpts compare keys as stored (see options.keyOpts); how a store
	// that is given keys with Add fills Granted is its own.
	keyOpts := cmp.Options{o.keyOpts(), cmpopts.IgnoreFields(auth.Key{}, "Granted")}

	t.Run("LooksUpAKeyByItsSecret", func(t *testing.T) {
		t.Parallel()
		full := auth.Key{
			ID:            newID(),
			Owner:         "acme",
			Quota:         auth.Quota{Remaining: 1000, Used: 5},
			ExpiresAt:     time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second),
			RateLimit:     &auth.Limit{Requests: 10, Period: time.Minute},
			AllowedModels: []string{"gpt-4o", "sora-2"},
		}
		other := unlimited()
		s, seeds := setup(t, full, other)
		for _, sd := range seeds {
			if diff := cmp.Diff(&sd.Key, lookup(t, s, sd.Secret), keyOpts); diff != "" {
				t.Errorf("Lookup(secret of %s) mismatch (-want +got):\n%s", sd.Key.ID, diff)
			}
		}
	})

	t.Run("ReturnsErrKeyNotFoundForAnUnknownSecret", func(t *testing.T) {
		t.Parallel()
		s, _ := setup(t, limited(10))
		unknown := NewSeed(t, auth.Key{}).Secret
		_, err := s.Lookup(ctx, unknown)
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
	})

	t.Run("DoesNotFindAKeyByItsID", func(t *testing.T) {
		t.Parallel()
		k := limited(10)
		k.ID = "sk-" + strings.TrimPrefix(newID(), "key_") // an id shaped like a key
		s, _ := setup(t, k)
		_, err := s.Lookup(ctx, k.ID)
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
	})

	t.Run("DoesNotFindAKeyByTheHashOfItsSecret", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(10))
		h := auth.HashSecret(seeds[0].Secret)
		for _, probe := range []string{h, strings.ToUpper(h), "sk-" + h, "sha256:" + h} {
			_, err := s.Lookup(ctx, probe)
			require.ErrorIs(t, err, auth.ErrKeyNotFound, "found by %q", probe)
		}
	})

	t.Run("DoesNotFindAKeyByAVariantOfItsSecret", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(10))
		secret := seeds[0].Secret
		for _, probe := range []string{
			"",
			secret[:len(secret)-1],
			secret + "A",
			strings.ToUpper(secret),
			" " + secret,
			strings.TrimPrefix(secret, auth.KeyPrefix),
		} {
			_, err := s.Lookup(ctx, probe)
			require.ErrorIs(t, err, auth.ErrKeyNotFound, "found by a variant of the secret")
		}
	})

	t.Run("ReturnsADisabledKeyWithDisabledSet", func(t *testing.T) {
		t.Parallel()
		k := limited(10)
		k.Disabled = true
		s, seeds := setup(t, k)
		require.True(t, lookup(t, s, seeds[0].Secret).Disabled)
	})

	t.Run("ReturnsAnExpiredKeyWithItsExpiry", func(t *testing.T) {
		t.Parallel()
		o.need(t, ExpiresAt)
		k := limited(10)
		k.ExpiresAt = time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
		s, seeds := setup(t, k)
		got := lookup(t, s, seeds[0].Secret)
		require.True(t, got.ExpiresAt.Equal(k.ExpiresAt), "ExpiresAt = %v, want %v", got.ExpiresAt, k.ExpiresAt)
		require.True(t, got.Expired(time.Now()))
	})

	t.Run("ReturnsAKeyWithoutExpiryAsNeverExpiring", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(10))
		got := lookup(t, s, seeds[0].Secret)
		require.True(t, got.ExpiresAt.IsZero(), "ExpiresAt = %v, want the zero time", got.ExpiresAt)
	})

	t.Run("KeepsUnlimitedAndLimitedQuotasApart", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, unlimited(), limited(0), limited(7))
		require.Equal(t, auth.UnlimitedQuota(), lookup(t, s, seeds[0].Secret).Quota)
		require.Equal(t, auth.LimitedQuota(0), lookup(t, s, seeds[1].Secret).Quota)
		require.Equal(t, auth.LimitedQuota(7), lookup(t, s, seeds[2].Secret).Quota)
	})

	t.Run("KeepsRateLimitUnsetApartFromExplicitlyUnlimited", func(t *testing.T) {
		t.Parallel()
		o.need(t, RateLimit)
		unset, none := limited(1), limited(1)
		none.RateLimit = &auth.Limit{}
		s, seeds := setup(t, unset, none)
		require.Nil(t, lookup(t, s, seeds[0].Secret).RateLimit)
		got := lookup(t, s, seeds[1].Secret).RateLimit
		require.NotNil(t, got)
		require.True(t, got.Unlimited())
	})

	t.Run("ReturnsAKeyThatTheCallerMayModify", func(t *testing.T) {
		t.Parallel()
		k := limited(10)
		k.RateLimit = &auth.Limit{Requests: 3, Period: time.Second}
		k.AllowedModels = []string{"a", "b"}
		s, seeds := setup(t, k)
		got := lookup(t, s, seeds[0].Secret)
		got.Quota.Remaining = 1 << 40
		got.Disabled = true
		if o.keeps(RateLimit) {
			require.NotNil(t, got.RateLimit, "Lookup returned no RateLimit for a key stored with one "+
				"(a store that does not keep rate limits says so with authtest.WithoutFields(authtest.RateLimit))")
			got.RateLimit.Requests = 1000
		}
		require.Len(t, got.AllowedModels, 2, "Lookup returned other AllowedModels than the key was stored with")
		got.AllowedModels[0] = "z"
		if diff := cmp.Diff(&k, lookup(t, s, seeds[0].Secret), keyOpts); diff != "" {
			t.Errorf("store changed by modifying a returned key (-want +got):\n%s", diff)
		}
	})

	t.Run("SettleTakesFromALimitedQuota", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		q, err := consume(s, seeds[0].Key.ID, 30)
		require.NoError(t, err)
		want := auth.Quota{Remaining: 70, Used: 30}
		require.Equal(t, want, q)
		require.Equal(t, want, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("SettleOfZeroChangesNothing", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100), limited(0))
		for _, sd := range seeds {
			q, err := consume(s, sd.Key.ID, 0)
			require.NoError(t, err)
			require.Equal(t, sd.Key.Quota, q)
			require.Equal(t, sd.Key.Quota, lookup(t, s, sd.Secret).Quota)
		}
	})

	t.Run("SettleOfExactlyWhatIsLeftSucceedsAndLeavesZero", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		q, err := consume(s, seeds[0].Key.ID, 100)
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 0, Used: 100}, q)
		require.True(t, lookup(t, s, seeds[0].Secret).Quota.Exhausted())
	})

	t.Run("SettleBeyondWhatIsLeftClampsAtZeroAndReturnsErrQuotaExceeded", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		q, err := consume(s, seeds[0].Key.ID, 150)
		require.ErrorIs(t, err, auth.ErrQuotaExceeded)
		want := auth.Quota{Remaining: 0, Used: 150}
		require.Equal(t, want, q)
		require.Equal(t, want, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("SettleOnAnExhaustedKeyReturnsErrQuotaExceeded", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(0))
		q, err := consume(s, seeds[0].Key.ID, 1)
		require.ErrorIs(t, err, auth.ErrQuotaExceeded)
		require.Equal(t, auth.Quota{Remaining: 0, Used: 1}, q)
	})

	t.Run("SettleReturnsErrKeyNotFoundForAnUnknownKeyID", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(10))
		_, err := consume(s, newID(), 1)
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
		_, err = consume(s, seeds[0].Secret, 1) // a secret is not an id
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
		require.Equal(t, auth.LimitedQuota(10), lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("UnlimitedKeysNeverRunOut", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, unlimited())
		for range 3 {
			q, err := consume(s, seeds[0].Key.ID, math.MaxInt64/2)
			require.NoError(t, err)
			require.True(t, q.Unlimited)
			require.False(t, q.Exhausted())
		}
		got := lookup(t, s, seeds[0].Secret).Quota
		require.True(t, got.Unlimited)
		require.Equal(t, int64(math.MaxInt64), got.Used, "Used must saturate, not wrap")
	})

	t.Run("SettleChargesDisabledAndExpiredKeys", func(t *testing.T) {
		t.Parallel()
		disabled, expired := limited(10), limited(10)
		disabled.Disabled = true
		expired.ExpiresAt = time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
		s, seeds := setup(t, disabled, expired)
		for _, sd := range seeds {
			q, err := consume(s, sd.Key.ID, 4)
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 6, Used: 4}, q)
		}
	})

	t.Run("SettleLeavesOtherKeysAlone", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(10), limited(10))
		_, err := consume(s, seeds[0].Key.ID, 10)
		require.NoError(t, err)
		require.Equal(t, auth.LimitedQuota(10), lookup(t, s, seeds[1].Secret).Quota)
	})

	reserve := func(t *testing.T, s auth.KeyStore, keyID string, amount int64) {
		t.Helper()
		require.NoError(t, s.Reserve(ctx, keyID, amount))
	}

	t.Run("ReserveSetsAsidePartOfALimitedQuota", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 30)
		got := lookup(t, s, seeds[0].Secret).Quota
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 30}, got)
		require.Equal(t, int64(70), got.Available())
	})

	t.Run("ReserveGrantsTheWholeAmountWhileAnythingIsUnreserved", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 99)
		reserve(t, s, seeds[0].Key.ID, 50) // 1 unreserved: granted in full
		got := lookup(t, s, seeds[0].Secret).Quota
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 149}, got)
		require.Equal(t, int64(0), got.Available())
	})

	t.Run("ReserveReturnsErrQuotaExceededWhenEverythingIsReserved", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 100)
		require.ErrorIs(t, s.Reserve(ctx, seeds[0].Key.ID, 1), auth.ErrQuotaExceeded)
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 100}, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("ReserveOnAnExhaustedKeyReturnsErrQuotaExceeded", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(0))
		require.ErrorIs(t, s.Reserve(ctx, seeds[0].Key.ID, 1), auth.ErrQuotaExceeded)
		require.Equal(t, auth.LimitedQuota(0), lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("ReserveOnAnUnlimitedKeySucceedsAndRecordsNothing", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, unlimited())
		reserve(t, s, seeds[0].Key.ID, math.MaxInt64)
		require.Equal(t, auth.UnlimitedQuota(), lookup(t, s, seeds[0].Secret).Quota)
	})

	// A reservation as large as an int64 holds (an estimate that
	// saturated) never wraps Reserved negative, which would let every
	// request through: the key is then all reserved, and refused, until
	// it is released.
	t.Run("ReserveSaturatesRatherThanWraps", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(math.MaxInt64))
		id := seeds[0].Key.ID
		reserve(t, s, id, 10)
		reserve(t, s, id, math.MaxInt64)
		require.Equal(t, auth.Quota{Remaining: math.MaxInt64, Reserved: math.MaxInt64}, lookup(t, s, seeds[0].Secret).Quota)
		require.ErrorIs(t, s.Reserve(ctx, id, 1), auth.ErrQuotaExceeded)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: math.MaxInt64, Used: math.MaxInt64})
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Used: math.MaxInt64}, q)
		q, err = s.Settle(ctx, auth.SettleParams{KeyID: id, Used: math.MaxInt64})
		require.ErrorIs(t, err, auth.ErrQuotaExceeded)
		require.Equal(t, auth.Quota{Used: math.MaxInt64}, q, "Used saturates")
	})

	// A settlement's cost that is not a number or negative counts as 0,
	// and the key's cost saturates rather than become infinite: a NaN
	// would never reach a budget in money, and JSON carries neither.
	t.Run("SettleKeepsTheCostFinite", func(t *testing.T) {
		t.Parallel()
		o.need(t, BudgetUSD)
		s, seeds := setup(t, limited(100))
		id := seeds[0].Key.ID
		for _, c := range []float64{0.25, math.NaN(), -1} {
			_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 1, CostUSD: c})
			require.NoError(t, err)
		}
		require.InDelta(t, 0.25, lookup(t, s, seeds[0].Secret).Quota.CostUSD, 1e-9)
		for _, c := range []float64{math.Inf(1), math.MaxFloat64} {
			q, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 1, CostUSD: c})
			require.NoError(t, err)
			require.Equal(t, math.MaxFloat64, q.CostUSD)
		}
		require.Equal(t, math.MaxFloat64, lookup(t, s, seeds[0].Secret).Quota.CostUSD)
	})

	t.Run("ReserveReturnsErrKeyNotFoundForAnUnknownKeyID", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(10))
		require.ErrorIs(t, s.Reserve(ctx, newID(), 1), auth.ErrKeyNotFound)
		require.ErrorIs(t, s.Reserve(ctx, seeds[0].Secret, 1), auth.ErrKeyNotFound)
		require.Equal(t, auth.LimitedQuota(10), lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("SettleReleasesTheReservationAndConsumesTheUsageInOneStep", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 50)
		reserve(t, s, seeds[0].Key.ID, 10)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: seeds[0].Key.ID, Reserved: 50, Used: 20})
		require.NoError(t, err)
		want := auth.Quota{Remaining: 80, Reserved: 10, Used: 20}
		require.Equal(t, want, q)
		require.Equal(t, want, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("SettleBeyondWhatIsLeftReleasesClampsAndReturnsErrQuotaExceeded", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 40)
		reserve(t, s, seeds[0].Key.ID, 70)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: seeds[0].Key.ID, Reserved: 70, Used: 130})
		require.ErrorIs(t, err, auth.ErrQuotaExceeded)
		want := auth.Quota{Remaining: 0, Reserved: 40, Used: 130}
		require.Equal(t, want, q)
		require.Equal(t, want, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("SettleNeverLeavesANegativeReservation", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 5)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: seeds[0].Key.ID, Reserved: 50, Used: 1})
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 99, Reserved: 0, Used: 1}, q)
	})

	t.Run("SettleOfAReservationWithoutUsageRefundsIt", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, limited(100))
		reserve(t, s, seeds[0].Key.ID, 100)
		require.ErrorIs(t, s.Reserve(ctx, seeds[0].Key.ID, 1), auth.ErrQuotaExceeded)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: seeds[0].Key.ID, Reserved: 100})
		require.NoError(t, err)
		require.Equal(t, auth.LimitedQuota(100), q)
		reserve(t, s, seeds[0].Key.ID, 1)
	})

	const goroutines = 128

	t.Run("SettleAddsTheCostToTheKey", func(t *testing.T) {
		t.Parallel()
		o.need(t, BudgetUSD)
		s, seeds := setup(t, limited(100))
		id := seeds[0].Key.ID
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 10, Model: "m", InputTokens: 4, OutputTokens: 6, CostUSD: 0.25})
		require.NoError(t, err)
		q, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 5, CostUSD: 0.5})
		require.NoError(t, err)
		require.InDelta(t, 0.75, q.CostUSD, 1e-9)
		require.Equal(t, int64(15), q.Used)
		got := lookup(t, s, seeds[0].Secret).Quota
		require.InDelta(t, 0.75, got.CostUSD, 1e-9)
		require.Equal(t, int64(85), got.Remaining)
	})

	t.Run("LookupReturnsTheBudgetInMoney", func(t *testing.T) {
		t.Parallel()
		o.need(t, BudgetUSD)
		k := unlimited()
		k.Quota.BudgetUSD = 2.5
		s, seeds := setup(t, k)
		q := lookup(t, s, seeds[0].Secret).Quota
		require.Equal(t, 2.5, q.BudgetUSD)
		require.False(t, q.Exhausted())
	})

	for _, tc := range []struct {
		name string
		key  func() auth.Key
	}{{"Limited", func() auth.Key { return limited(1000) }}, {"Unlimited", unlimited}} {
		t.Run("ReserveRefusesA"+tc.name+"KeyWhoseCostReachedItsBudget", func(t *testing.T) {
			t.Parallel()
			o.need(t, BudgetUSD)
			k := tc.key()
			k.Quota.BudgetUSD = 1
			s, seeds := setup(t, k)
			require.NoError(t, s.Reserve(ctx, k.ID, 10), "below its budget, a key is granted")
			_, err := s.Settle(ctx, auth.SettleParams{KeyID: k.ID, Reserved: 10, Used: 10, Model: "m", CostUSD: 0.6})
			require.NoError(t, err)
			require.NoError(t, s.Reserve(ctx, k.ID, 10), "0.6 of 1 USD spent: granted")
			q, err := s.Settle(ctx, auth.SettleParams{KeyID: k.ID, Reserved: 10, Used: 10, Model: "m", CostUSD: 0.6})
			require.NoError(t, err, "a cost past the budget is recorded, never refused")
			require.InDelta(t, 1.2, q.CostUSD, 1e-9)
			require.ErrorIs(t, s.Reserve(ctx, k.ID, 10), auth.ErrQuotaExceeded)
			got := lookup(t, s, seeds[0].Secret).Quota
			require.True(t, got.OverBudget())
			require.True(t, got.Exhausted(), "the middleware refuses it with 403")
			require.Zero(t, got.Reserved, "the refused reservation changed nothing")
		})
	}

	t.Run("ConcurrentReservationsNeverPromiseMoreThanOneAmountBeyondTheBudget", func(t *testing.T) {
		t.Parallel()
		// Reservations of 7 succeed while less than 100 is reserved: 15
		// of them (the 15th finds 2 unreserved and takes 7), whatever the
		// interleaving.
		const amount, budget = 7, 100
		s, seeds := setup(t, limited(budget))
		var ok, exceeded atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				err := s.Reserve(ctx, seeds[0].Key.ID, amount)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, auth.ErrQuotaExceeded):
					exceeded.Add(1)
				default:
					t.Errorf("Reserve: %v", err)
				}
			})
		}
		wg.Wait()
		const granted = (budget + amount - 1) / amount
		require.Equal(t, int64(granted), ok.Load(), "reservations granted")
		require.Equal(t, int64(goroutines-granted), exceeded.Load(), "reservations refused")
		require.Equal(t, auth.Quota{Remaining: budget, Reserved: granted * amount}, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("ConcurrentRequestsOverspendByLessThanOneEstimate", func(t *testing.T) {
		t.Parallel()
		// Requests that reserve 7 and use 7 on a budget of 100: admission
		// needs consumed + reserved < 100 and each admitted request adds
		// 7 to that sum, so 15 are admitted, whatever the interleaving,
		// and they spend 105: within the bound of package auth,
		// B − 1 + max E = 106.
		const estimate, budget = 7, 100
		s, seeds := setup(t, limited(budget))
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				err := s.Reserve(ctx, seeds[0].Key.ID, estimate)
				if errors.Is(err, auth.ErrQuotaExceeded) {
					return
				}
				if err != nil {
					t.Errorf("Reserve: %v", err)
					return
				}
				admitted.Add(1)
				_, err = s.Settle(ctx, auth.SettleParams{KeyID: seeds[0].Key.ID, Reserved: estimate, Used: estimate})
				if err != nil && !errors.Is(err, auth.ErrQuotaExceeded) {
					t.Errorf("Settle: %v", err)
				}
			})
		}
		wg.Wait()
		const granted = (budget + estimate - 1) / estimate
		require.Equal(t, int64(granted), admitted.Load(), "requests admitted")
		got := lookup(t, s, seeds[0].Secret).Quota
		require.Equal(t, auth.Quota{Remaining: 0, Used: granted * estimate}, got)
		require.LessOrEqual(t, got.Used, int64(budget-1+estimate), "the bound of package auth")
	})

	t.Run("ConcurrentReservationsAndSettlementsLoseNoUpdate", func(t *testing.T) {
		t.Parallel()
		const perGoroutine, reserved, used, budget = 8, 10, 3, 1_000_000
		s, seeds := setup(t, limited(budget))
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for range perGoroutine {
					if err := s.Reserve(ctx, seeds[0].Key.ID, reserved); err != nil {
						t.Errorf("Reserve: %v", err)
						return
					}
					if _, err := s.Settle(ctx, auth.SettleParams{KeyID: seeds[0].Key.ID, Reserved: reserved, Used: used}); err != nil {
						t.Errorf("Settle: %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		const total = goroutines * perGoroutine * used
		require.Equal(t, auth.Quota{Remaining: budget - total, Used: total}, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("ConcurrentSettlementLosesNoUpdate", func(t *testing.T) {
		t.Parallel()
		const perGoroutine, amount, budget = 8, 3, 1_000_000
		s, seeds := setup(t, limited(budget))
		var wg sync.WaitGroup
		errs := make(chan error, goroutines*perGoroutine)
		for range goroutines {
			wg.Go(func() {
				for range perGoroutine {
					if _, err := consume(s, seeds[0].Key.ID, amount); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		const used = goroutines * perGoroutine * amount
		require.Equal(t, auth.Quota{Remaining: budget - used, Used: used}, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("ConcurrentSettlementNeverOverdrawsUnnoticed", func(t *testing.T) {
		t.Parallel()
		// 14 charges of 7 fit in 100; the 15th takes the last 2 and
		// fails, as do all later ones, whatever the interleaving.
		const amount, budget = 7, 100
		s, seeds := setup(t, limited(budget))
		var ok, exceeded atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				q, err := consume(s, seeds[0].Key.ID, amount)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, auth.ErrQuotaExceeded):
					exceeded.Add(1)
					if q.Remaining != 0 {
						t.Errorf("Settle returned ErrQuotaExceeded with Remaining %d, want 0", q.Remaining)
					}
				default:
					t.Errorf("Settle: %v", err)
				}
				if q.Remaining < 0 {
					t.Errorf("Settle returned a negative Remaining %d", q.Remaining)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(budget/amount), ok.Load(), "successful charges")
		require.Equal(t, int64(goroutines-budget/amount), exceeded.Load(), "charges refused with ErrQuotaExceeded")
		require.Equal(t, auth.Quota{Remaining: 0, Used: goroutines * amount}, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("ConcurrentSettlementOnAnUnlimitedKeyRecordsAllUsage", func(t *testing.T) {
		t.Parallel()
		s, seeds := setup(t, unlimited())
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				if _, err := consume(s, seeds[0].Key.ID, 5); err != nil {
					t.Errorf("Settle: %v", err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, auth.Quota{Unlimited: true, Used: goroutines * 5}, lookup(t, s, seeds[0].Secret).Quota)
	})

	t.Run("LookupSeesAConsistentQuotaDuringConsumption", func(t *testing.T) {
		t.Parallel()
		const budget = 1 << 20
		s, seeds := setup(t, limited(budget))
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				if _, err := consume(s, seeds[0].Key.ID, 1); err != nil {
					t.Errorf("Settle: %v", err)
				}
			})
			wg.Go(func() {
				k, err := s.Lookup(ctx, seeds[0].Secret)
				if err != nil {
					t.Errorf("Lookup: %v", err)
					return
				}
				if k.Quota.Remaining+k.Quota.Used != budget {
					t.Errorf("Lookup saw Remaining %d + Used %d, want %d", k.Quota.Remaining, k.Quota.Used, budget)
				}
			})
		}
		wg.Wait()
	})
}

// newID returns a random key id, so that subtests sharing a database do
// not collide.
func newID() string { return "key_" + rand.Text() }
