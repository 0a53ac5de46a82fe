package auth_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

func TestReserve(t *testing.T) {
	t.Parallel()

	// serve runs fn as the handler of one request of the key with budget.
	serve := func(t *testing.T, budget int64, fn func(r *http.Request, keys *auth.MemoryKeyStore)) *auth.MemoryKeyStore {
		t.Helper()
		keys := storeWith(t, "sk-abc", auth.Key{ID: "key_1", Quota: auth.LimitedQuota(budget)})
		h := auth.Middleware(keys)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { fn(r, keys) }))
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer sk-abc")
		h.ServeHTTP(httptest.NewRecorder(), r)
		return keys
	}
	quota := func(t *testing.T, keys *auth.MemoryKeyStore) auth.Quota {
		t.Helper()
		k, err := keys.Lookup(context.Background(), "sk-abc")
		require.NoError(t, err)
		return k.Quota
	}

	t.Run("ReservesAndSettlesAgainstTheRequestsKey", func(t *testing.T) {
		t.Parallel()
		var mid auth.Quota
		keys := serve(t, 100, func(r *http.Request, keys *auth.MemoryKeyStore) {
			res, err := auth.Reserve(r.Context(), 60)
			require.NoError(t, err)
			require.Equal(t, int64(60), res.Amount())
			require.Equal(t, "key_1", res.KeyID())
			mid = quota(t, keys)
			q, err := res.Settle(r.Context(), 25)
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 75, Used: 25}, q)
			require.Zero(t, res.Amount())
		})
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 60}, mid)
		require.Equal(t, auth.Quota{Remaining: 75, Used: 25}, quota(t, keys))
	})

	t.Run("RefusesWhenAllOfTheBudgetIsReserved", func(t *testing.T) {
		t.Parallel()
		serve(t, 100, func(r *http.Request, _ *auth.MemoryKeyStore) {
			_, err := auth.Reserve(r.Context(), 100)
			require.NoError(t, err)
			_, err = auth.Reserve(r.Context(), 1)
			require.ErrorIs(t, err, auth.ErrQuotaExceeded)
		})
	})

	t.Run("SettlesOnlyOnce", func(t *testing.T) {
		t.Parallel()
		keys := serve(t, 100, func(r *http.Request, _ *auth.MemoryKeyStore) {
			res, err := auth.Reserve(r.Context(), 10)
			require.NoError(t, err)
			_, err = res.Settle(r.Context(), 5)
			require.NoError(t, err)
			_, err = res.Settle(r.Context(), 5)
			require.Error(t, err)
		})
		require.Equal(t, auth.Quota{Remaining: 95, Used: 5}, quota(t, keys))
	})

	t.Run("SettlesEvenWhenTheClientHasGone", func(t *testing.T) {
		t.Parallel()
		keys := serve(t, 100, func(r *http.Request, _ *auth.MemoryKeyStore) {
			ctx, cancel := context.WithCancel(r.Context())
			cancel()
			res, err := auth.Reserve(ctx, 10)
			require.NoError(t, err)
			_, err = res.Settle(ctx, 7)
			require.NoError(t, err)
		})
		require.Equal(t, auth.Quota{Remaining: 93, Used: 7}, quota(t, keys))
	})

	t.Run("ReturnsErrNoPrincipalOutsideTheMiddleware", func(t *testing.T) {
		t.Parallel()
		_, err := auth.Reserve(context.Background(), 1)
		require.ErrorIs(t, err, auth.ErrNoPrincipal)
		_, err = auth.Settle(context.Background(), auth.SettleParams{KeyID: "k"})
		require.ErrorIs(t, err, auth.ErrNoPrincipal)
	})

	t.Run("SettleSettlesAnyKeyThroughTheRequestsStore", func(t *testing.T) {
		t.Parallel()
		keys := storeWith(t, "sk-abc", auth.Key{ID: "key_1", Quota: auth.LimitedQuota(100)})
		require.NoError(t, keys.Add(context.Background(), "sk-other", auth.Key{ID: "key_2", Quota: auth.LimitedQuota(100)}))
		require.NoError(t, keys.Reserve(context.Background(), "key_2", 40))
		h := auth.Middleware(keys)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			q, err := auth.Settle(r.Context(), auth.SettleParams{KeyID: "key_2", Reserved: 40, Used: 10})
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 90, Used: 10}, q)
		}))
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer sk-abc")
		h.ServeHTTP(httptest.NewRecorder(), r)
		require.Equal(t, auth.LimitedQuota(100), quota(t, keys), "the request's own key is untouched")
	})

	t.Run("ReservesNothingForAPrincipalWithoutAStore", func(t *testing.T) {
		t.Parallel()
		ctx := auth.WithPrincipal(context.Background(), &auth.Principal{KeyID: "k", Quota: auth.LimitedQuota(0)})
		res, err := auth.Reserve(ctx, 100)
		require.NoError(t, err)
		require.Zero(t, res.Amount())
		_, err = res.Settle(ctx, 50)
		require.NoError(t, err)
	})

	t.Run("RefusesNegativeAmounts", func(t *testing.T) {
		t.Parallel()
		serve(t, 100, func(r *http.Request, _ *auth.MemoryKeyStore) {
			_, err := auth.Reserve(r.Context(), -1)
			require.Error(t, err)
			res, err := auth.Reserve(r.Context(), 1)
			require.NoError(t, err)
			_, err = res.Settle(r.Context(), -1)
			require.Error(t, err)
		})
	})

	// A settlement that records nothing must still release: before, a
	// negative usage (an upstream's absurd count) left the reservation
	// held, and the key refused with 403 until a restart.
	t.Run("ReleasesTheReservationOfANegativeAmount", func(t *testing.T) {
		t.Parallel()
		keys := serve(t, 100, func(r *http.Request, _ *auth.MemoryKeyStore) {
			res, err := auth.Reserve(r.Context(), 100)
			require.NoError(t, err)
			_, err = res.SettleUsage(r.Context(), auth.SettleParams{Used: -2, Model: "m", CostUSD: 1})
			require.ErrorContains(t, err, "negative amount -2")
		})
		require.Equal(t, auth.LimitedQuota(100), quota(t, keys), "released, nothing charged")
		rows, err := keys.Usage(context.Background(), auth.UsageParams{})
		require.NoError(t, err)
		require.Empty(t, rows)
	})

	t.Run("ReleasesTheReservationWhenTheStoreFailsTheSettlement", func(t *testing.T) {
		t.Parallel()
		keys := storeWith(t, "sk-abc", auth.Key{ID: "key_1", Quota: auth.LimitedQuota(100)})
		failing := &failingSettle{MemoryKeyStore: keys}
		h := auth.Middleware(failing)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			res, err := auth.Reserve(r.Context(), 100)
			require.NoError(t, err)
			_, err = res.Settle(r.Context(), 30)
			require.ErrorIs(t, err, errSettle)
		}))
		r := httptest.NewRequest(http.MethodPost, "/", nil)
		r.Header.Set("Authorization", "Bearer sk-abc")
		h.ServeHTTP(httptest.NewRecorder(), r)
		require.Equal(t, auth.LimitedQuota(100), quota(t, keys), "the usage is lost, the reservation released")
	})

	t.Run("CleansTheCostAndCounts", func(t *testing.T) {
		t.Parallel()
		keys := serve(t, 100, func(r *http.Request, _ *auth.MemoryKeyStore) {
			res, err := auth.Reserve(r.Context(), 10)
			require.NoError(t, err)
			_, err = res.SettleUsage(r.Context(), auth.SettleParams{Used: 5, Model: "m", InputTokens: -3, OutputTokens: 5, CostUSD: math.NaN()})
			require.NoError(t, err)
		})
		require.Equal(t, auth.Quota{Remaining: 95, Used: 5}, quota(t, keys))
		rows, err := keys.Usage(context.Background(), auth.UsageParams{GroupBy: auth.GroupByModel})
		require.NoError(t, err)
		require.Equal(t, []auth.UsageRow{{Model: "m", Requests: 1, OutputTokens: 5}}, rows)
	})
}

var errSettle = errors.New("the store failed")

// failingSettle fails every Settle that records usage, as a store that
// refuses a value would; a Settle that only releases passes.
type failingSettle struct{ *auth.MemoryKeyStore }

func (f *failingSettle) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	if p.Used > 0 {
		return auth.Quota{}, errSettle
	}
	return f.MemoryKeyStore.Settle(ctx, p)
}

// TestWithPrincipalChargesItsStore: custom authentication in front of
// the handlers, with auth.WithPrincipal, is charged to the principal's
// store as the middleware's principals are; without a store, nothing is
// recorded.
func TestWithPrincipalChargesItsStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name      string
		charge    func(ctx context.Context) error
		wantQuota auth.Quota // of user_1 after charge, with a store
	}{
		{"Reserve", func(ctx context.Context) error {
			_, err := auth.Reserve(ctx, 10)
			return err
		}, auth.Quota{Remaining: 30, Reserved: 10}},
		{"ReserveAndSettle", func(ctx context.Context) error {
			rsv, err := auth.Reserve(ctx, 10)
			if err != nil {
				return err
			}
			_, err = rsv.SettleUsage(ctx, auth.SettleParams{Used: 12, Model: "m"})
			return err
		}, auth.Quota{Remaining: 18, Used: 12}},
		{"Charge", func(ctx context.Context) error {
			_, err := auth.Charge(ctx, 5)
			return err
		}, auth.Quota{Remaining: 25, Used: 5}},
		{"Settle", func(ctx context.Context) error {
			_, err := auth.Settle(ctx, auth.SettleParams{KeyID: "user_1", Used: 3})
			return err
		}, auth.Quota{Remaining: 27, Used: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			keys := auth.NewMemoryKeyStore()
			require.NoError(t, keys.Add(ctx, "", auth.Key{ID: "user_1", Quota: auth.LimitedQuota(30)}))

			p := &auth.Principal{KeyID: "user_1", Quota: auth.LimitedQuota(30), Keys: keys}
			require.NoError(t, tc.charge(auth.WithPrincipal(ctx, p)))
			k, err := keys.LookupID(ctx, "user_1")
			require.NoError(t, err)
			require.Equal(t, tc.wantQuota, k.Quota)

			p.Keys = nil
			require.NoError(t, tc.charge(auth.WithPrincipal(ctx, p)), "a principal without a store")
			k, err = keys.LookupID(ctx, "user_1")
			require.NoError(t, err)
			require.Equal(t, tc.wantQuota, k.Quota, "charges nothing")
		})
	}
}
