package authtest

import (
	"context"
	"crypto/rand"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// AdminStore is a key store whose keys can be created (auth.KeyPutter)
// and administered (auth.KeyAdmin): what [TestKeyAdmin] checks.
type AdminStore interface {
	auth.KeyStore
	auth.KeyPutter
	auth.KeyAdmin
}

// TestKeyAdmin checks the auth.KeyAdmin contract. newStore is called once
// per subtest and must return a store whose keys the subtest creates
// with PutKey (key ids are random, so stores backed by one shared
// database can also run the suite: lists are checked within a random id
// prefix). Subtests run in parallel. opts adapt the suite to a store
// that does not keep some fields ([WithoutFields]).
func TestKeyAdmin(t *testing.T, newStore func(t *testing.T) AdminStore, opts ...Option) {
	t.Helper()
	ctx := context.Background()
	o := newOptions(opts)
	setup := func(t *testing.T) AdminStore {
		t.Helper()
		s := newStore(t)
		require.NotNil(t, s, "newStore returned nil")
		return s
	}
	put := func(t *testing.T, s AdminStore, k auth.Key) Seed {
		t.Helper()
		sd := NewSeed(t, k)
		require.NoError(t, s.PutKey(ctx, sd.Secret, sd.Key))
		return sd
	}
	keyOpts := o.keyOpts()

	t.Run("GetKeyReturnsTheKeyWithItsCreationTime", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		k := auth.Key{ID: newID(), Owner: "acme", Quota: auth.Quota{Remaining: 100, BudgetUSD: 3},
			RateLimit: &auth.Limit{Requests: 5, Period: time.Second}, AllowedModels: []string{"m"},
			ExpiresAt: time.Now().Add(time.Hour).UTC().Truncate(time.Second)}
		before := time.Now().Add(-time.Minute)
		put(t, s, k)
		k.Granted = 100 // the budget put
		got, err := s.GetKey(ctx, k.ID)
		require.NoError(t, err)
		if diff := cmp.Diff(&k, got, keyOpts); diff != "" {
			t.Errorf("GetKey mismatch (-want +got):\n%s", diff)
		}
		require.True(t, got.CreatedAt.After(before), "CreatedAt %v is the time of PutKey", got.CreatedAt)
	})

	t.Run("PuttingAgainKeepsTheCreationTime", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
		first, err := s.GetKey(ctx, sd.Key.ID)
		require.NoError(t, err)
		sd.Key.Owner = "other"
		require.NoError(t, s.PutKey(ctx, sd.Secret, sd.Key))
		again, err := s.GetKey(ctx, sd.Key.ID)
		require.NoError(t, err)
		require.Equal(t, "other", again.Owner)
		require.True(t, first.CreatedAt.Equal(again.CreatedAt), "CreatedAt %v became %v", first.CreatedAt, again.CreatedAt)
	})

	t.Run("GetKeyReturnsErrKeyNotFoundForAnUnknownID", func(t *testing.T) {
		t.Parallel()
		_, err := setup(t).GetKey(ctx, newID())
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
	})

	t.Run("ListKeysPagesInOrderOfID", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		prefix := "key_" + rand.Text() + "_"
		for _, suffix := range []string{"c", "a", "d", "b"} {
			put(t, s, auth.Key{ID: prefix + suffix, Quota: auth.LimitedQuota(1)})
		}
		page, err := s.ListKeys(ctx, auth.ListKeysParams{After: prefix, Limit: 3})
		require.NoError(t, err)
		require.Equal(t, []string{prefix + "a", prefix + "b", prefix + "c"}, ids(page))
		page, err = s.ListKeys(ctx, auth.ListKeysParams{After: prefix + "c", Limit: 3})
		require.NoError(t, err)
		require.NotEmpty(t, page)
		require.Equal(t, prefix+"d", page[0].ID)
		require.LessOrEqual(t, len(page), 3)
		for _, k := range page {
			require.Greater(t, k.ID, prefix+"c", "after is exclusive and the order is by id")
		}
	})

	t.Run("ListKeysReturnsTheStoredFields", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		prefix := "key_" + rand.Text() + "_"
		k := auth.Key{ID: prefix + "a", Owner: "o", Quota: auth.LimitedQuota(50), Disabled: true, AllowedModels: []string{"x"}}
		put(t, s, k)
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: k.ID, Used: 20, CostUSD: 0.5})
		require.NoError(t, err)
		page, err := s.ListKeys(ctx, auth.ListKeysParams{After: prefix, Limit: 1})
		require.NoError(t, err)
		require.Len(t, page, 1)
		want := k
		want.Quota = auth.Quota{Remaining: 30, Used: 20, CostUSD: 0.5}
		want.Granted = 50
		if diff := cmp.Diff(&want, page[0], keyOpts, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("ListKeys mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("UpdateKeyChangesTheLimitsAndKeepsTheUsage", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Owner: "o", Quota: auth.LimitedQuota(100)})
		id := sd.Key.ID
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 40, CostUSD: 0.25})
		require.NoError(t, err)
		expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		got, err := s.UpdateKey(ctx, id, func(k *auth.Key) error {
			require.Equal(t, int64(60), k.Quota.Remaining, "fn sees the stored key")
			k.ID = "ignored"
			k.Owner = "p"
			k.Quota.Remaining = 500
			k.Granted = 540
			k.Quota.Used = 0 // ignored: the usage is the store's
			k.Quota.CostUSD = 0
			k.Quota.BudgetUSD = 9
			k.RateLimit = &auth.Limit{Requests: 7, Period: time.Minute}
			k.AllowedModels = []string{"a", "b"}
			k.ExpiresAt = expires
			k.Disabled = true
			return nil
		})
		require.NoError(t, err)
		want := &auth.Key{ID: id, Owner: "p", Quota: auth.Quota{Remaining: 500, Used: 40, CostUSD: 0.25, BudgetUSD: 9}, Granted: 540,
			RateLimit: &auth.Limit{Requests: 7, Period: time.Minute}, AllowedModels: []string{"a", "b"},
			ExpiresAt: expires, Disabled: true}
		opts := cmp.Options{keyOpts, cmpopts.EquateApprox(0, 1e-9)}
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Errorf("UpdateKey result mismatch (-want +got):\n%s", diff)
		}
		looked, err := s.Lookup(ctx, sd.Secret)
		require.NoError(t, err, "the secret still finds the key")
		if diff := cmp.Diff(want, looked, opts); diff != "" {
			t.Errorf("Lookup after UpdateKey mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("UpdateKeyToUnlimitedAndBack", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.LimitedQuota(10)})
		got, err := s.UpdateKey(ctx, sd.Key.ID, func(k *auth.Key) error { k.Quota.Unlimited = true; return nil })
		require.NoError(t, err)
		require.True(t, got.Quota.Unlimited)
		if o.keeps(Granted) {
			require.Zero(t, got.Granted, "an unlimited key has no Granted")
		}
		require.NoError(t, s.Reserve(ctx, sd.Key.ID, 1000))
		got, err = s.UpdateKey(ctx, sd.Key.ID, func(k *auth.Key) error {
			k.Quota = auth.LimitedQuota(5)
			k.Granted = 5
			return nil
		})
		require.NoError(t, err)
		require.False(t, got.Quota.Unlimited)
		require.Equal(t, int64(5), got.Quota.Remaining)
		if o.keeps(Granted) {
			require.Equal(t, int64(5), got.Granted)
		}
	})

	t.Run("GrantedOutlivesAnOverdraft", func(t *testing.T) {
		t.Parallel()
		o.need(t, Granted)
		// A key granted 1000 that is charged 4000 (the request that
		// crosses a budget is served): Remaining says 0, Used 4000, and
		// only Granted still says 1000.
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.LimitedQuota(1000)})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: sd.Key.ID, Used: 4000})
		require.ErrorIs(t, err, auth.ErrQuotaExceeded)
		got, err := s.GetKey(ctx, sd.Key.ID)
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 0, Used: 4000}, got.Quota)
		require.Equal(t, int64(1000), got.Granted)
		require.Equal(t, int64(1000), got.GrantedQuota())
	})

	t.Run("UpdateKeyChangesNothingWhenFnFails", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Owner: "o", Quota: auth.LimitedQuota(10)})
		boom := errors.New("boom")
		_, err := s.UpdateKey(ctx, sd.Key.ID, func(k *auth.Key) error { k.Owner = "changed"; return boom })
		require.ErrorIs(t, err, boom)
		got, err := s.GetKey(ctx, sd.Key.ID)
		require.NoError(t, err)
		require.Equal(t, "o", got.Owner)
	})

	t.Run("UpdateKeyReturnsErrKeyNotFoundForAnUnknownID", func(t *testing.T) {
		t.Parallel()
		_, err := setup(t).UpdateKey(ctx, newID(), func(*auth.Key) error { return nil })
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
	})

	t.Run("UpdateKeyLosesNoConcurrentSettlement", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.LimitedQuota(1_000_000)})
		id := sd.Key.ID
		const n = 40
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if _, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 1, CostUSD: 0.5, Model: "m"}); err != nil {
					t.Errorf("Settle: %v", err)
				}
				if i%4 == 0 {
					if _, err := s.UpdateKey(ctx, id, func(k *auth.Key) error { k.Owner = "o"; return nil }); err != nil {
						t.Errorf("UpdateKey: %v", err)
					}
				}
			})
		}
		wg.Wait()
		got, err := s.GetKey(ctx, id)
		require.NoError(t, err)
		require.Equal(t, int64(n), got.Quota.Used)
		require.Equal(t, int64(1_000_000-n), got.Quota.Remaining)
		if o.keeps(BudgetUSD) {
			require.InDelta(t, n*0.5, got.Quota.CostUSD, 1e-9)
		}
	})

	t.Run("DeleteKeyMakesItsSecretUnknown", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
		require.NoError(t, s.DeleteKey(ctx, sd.Key.ID))
		_, err := s.Lookup(ctx, sd.Secret)
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
		_, err = s.GetKey(ctx, sd.Key.ID)
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
		require.ErrorIs(t, s.DeleteKey(ctx, sd.Key.ID), auth.ErrKeyNotFound, "deleting twice")
		require.ErrorIs(t, s.Reserve(ctx, sd.Key.ID, 1), auth.ErrKeyNotFound)
	})

	t.Run("DeleteKeyKeepsItsUsage", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		u, ok := s.(auth.UsageReader)
		if !ok {
			t.Skip("the store is not an auth.UsageReader")
		}
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: sd.Key.ID, Used: 3, Model: "m", InputTokens: 1, OutputTokens: 2})
		require.NoError(t, err)
		require.NoError(t, s.DeleteKey(ctx, sd.Key.ID))
		rows, err := u.Usage(ctx, auth.UsageParams{KeyID: sd.Key.ID, GroupBy: auth.GroupByKey})
		require.NoError(t, err)
		require.Equal(t, []auth.UsageRow{{KeyID: sd.Key.ID, Requests: 1, InputTokens: 1, OutputTokens: 2}}, rows)
	})

	t.Run("PuttingADeletedIDAgainMakesANewKey", func(t *testing.T) {
		t.Parallel()
		s := setup(t)
		sd := put(t, s, auth.Key{ID: newID(), Quota: auth.LimitedQuota(10)})
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: sd.Key.ID, Used: 4})
		require.NoError(t, err)
		require.NoError(t, s.DeleteKey(ctx, sd.Key.ID))
		require.NoError(t, s.PutKey(ctx, sd.Secret, sd.Key))
		got, err := s.GetKey(ctx, sd.Key.ID)
		require.NoError(t, err)
		require.Equal(t, auth.LimitedQuota(10), got.Quota)
		if o.keeps(Granted) {
			require.Equal(t, int64(10), got.Granted)
		}
	})
}

func ids(keys []*auth.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.ID
	}
	return out
}

// UsageStore is a key store whose keys can be written and whose usage
// can be read: what [TestUsageReader] checks.
type UsageStore interface {
	auth.KeyStore
	auth.KeyPutter
	auth.UsageReader
}

// TestUsageReader checks the auth.UsageReader contract: one usage row per
// settlement with a model, recorded with the quota, and read back
// filtered and grouped. newStore is called once per subtest and must
// return a store whose keys the subtest creates with PutKey (key ids and
// model names are random, so stores backed by one shared database can
// also run the suite). Subtests run in parallel.
func TestUsageReader(t *testing.T, newStore func(t *testing.T) UsageStore) {
	t.Helper()
	ctx := context.Background()
	setup := func(t *testing.T, n int) (UsageStore, []string) {
		t.Helper()
		s := newStore(t)
		require.NotNil(t, s, "newStore returned nil")
		keys := make([]string, n)
		for i := range keys {
			sd := NewSeed(t, auth.Key{ID: newID(), Quota: auth.UnlimitedQuota()})
			require.NoError(t, s.PutKey(ctx, sd.Secret, sd.Key))
			keys[i] = sd.Key.ID
		}
		return s, keys
	}
	settle := func(t *testing.T, s UsageStore, p auth.SettleParams) {
		t.Helper()
		_, err := s.Settle(ctx, p)
		require.NoError(t, err)
	}
	usage := func(t *testing.T, s UsageStore, p auth.UsageParams) []auth.UsageRow {
		t.Helper()
		rows, err := s.Usage(ctx, p)
		require.NoError(t, err)
		return rows
	}
	rowOpts := cmp.Options{cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateEmpty()}
	day := func(d int) time.Time { return time.Date(2026, 11, d, 12, 0, 0, 0, time.UTC) }
	model := func() string { return "model-" + rand.Text() }

	t.Run("RecordsOneRowPerSettlementWithAModel", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 1)
		m := model()
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 30, Model: m, InputTokens: 10, OutputTokens: 20, CostUSD: 0.001})
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 7, Model: m, InputTokens: 3, OutputTokens: 4, CostUSD: 0.0005})
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 0}) // a released reservation: no row
		want := []auth.UsageRow{{Model: m, Requests: 2, InputTokens: 13, OutputTokens: 24, CostUSD: 0.0015}}
		if diff := cmp.Diff(want, usage(t, s, auth.UsageParams{KeyID: keys[0], GroupBy: auth.GroupByModel}), rowOpts); diff != "" {
			t.Errorf("Usage mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("KeepsTheCachedCacheWriteAndReasoningTokens", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 1)
		m := model()
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 150, Model: m, InputTokens: 100, OutputTokens: 50,
			CachedTokens: 60, CacheWriteTokens: 30, ReasoningTokens: 20, CostUSD: 0.002})
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 7, Model: m, InputTokens: 3, OutputTokens: 4, CostUSD: 0.0005})
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 12, Model: m, InputTokens: 8, OutputTokens: 4,
			CachedTokens: 5, ReasoningTokens: 1, CostUSD: 0.0001})
		want := []auth.UsageRow{{Model: m, Requests: 3, InputTokens: 111, OutputTokens: 58,
			CachedTokens: 65, CacheWriteTokens: 30, ReasoningTokens: 21, CostUSD: 0.0026}}
		if diff := cmp.Diff(want, usage(t, s, auth.UsageParams{KeyID: keys[0], GroupBy: auth.GroupByModel}), rowOpts); diff != "" {
			t.Errorf("Usage mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("RecordsNothingForAnUnknownKey", func(t *testing.T) {
		t.Parallel()
		s, _ := setup(t, 0)
		id := newID()
		_, err := s.Settle(ctx, auth.SettleParams{KeyID: id, Used: 1, Model: "m"})
		require.ErrorIs(t, err, auth.ErrKeyNotFound)
		require.Empty(t, usage(t, s, auth.UsageParams{KeyID: id}))
	})

	t.Run("GroupsByDaySortedAndFiltersByTime", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 1)
		m := model()
		for _, d := range []int{3, 1, 2, 1} {
			settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 2, Model: m, InputTokens: 1, OutputTokens: 1, CostUSD: 1, Time: day(d)})
		}
		want := []auth.UsageRow{
			{Day: "2026-11-01", Requests: 2, InputTokens: 2, OutputTokens: 2, CostUSD: 2},
			{Day: "2026-11-02", Requests: 1, InputTokens: 1, OutputTokens: 1, CostUSD: 1},
			{Day: "2026-11-03", Requests: 1, InputTokens: 1, OutputTokens: 1, CostUSD: 1},
		}
		if diff := cmp.Diff(want, usage(t, s, auth.UsageParams{KeyID: keys[0]}), rowOpts); diff != "" {
			t.Errorf("Usage by day (the default) mismatch (-want +got):\n%s", diff)
		}
		got := usage(t, s, auth.UsageParams{KeyID: keys[0], GroupBy: auth.GroupByDay,
			From: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)})
		if diff := cmp.Diff(want[1:2], got, rowOpts); diff != "" {
			t.Errorf("Usage from day 2 to day 3 (exclusive) mismatch (-want +got):\n%s", diff)
		}
		got = usage(t, s, auth.UsageParams{KeyID: keys[0], From: day(1).Add(time.Second)})
		require.Equal(t, []string{"2026-11-02", "2026-11-03"}, []string{got[0].Day, got[1].Day}, "From is inclusive of the instant, not the day")
	})

	t.Run("GroupsByModelAndFiltersByModel", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 1)
		a, b := "a-"+model(), "b-"+model()
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 1, Model: b, OutputTokens: 1, CostUSD: 0.5})
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 1, Model: a, InputTokens: 1, CostUSD: 0.25})
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 1, Model: b, OutputTokens: 1, CostUSD: 0.5})
		want := []auth.UsageRow{
			{Model: a, Requests: 1, InputTokens: 1, CostUSD: 0.25},
			{Model: b, Requests: 2, OutputTokens: 2, CostUSD: 1},
		}
		if diff := cmp.Diff(want, usage(t, s, auth.UsageParams{KeyID: keys[0], GroupBy: auth.GroupByModel}), rowOpts); diff != "" {
			t.Errorf("Usage by model mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want[1:], usage(t, s, auth.UsageParams{Model: b, GroupBy: auth.GroupByModel}), rowOpts); diff != "" {
			t.Errorf("Usage of model b mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("GroupsByKey", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 3)
		m := model()
		for i, id := range keys[:2] {
			for range i + 1 {
				settle(t, s, auth.SettleParams{KeyID: id, Used: 5, Model: m, InputTokens: 2, OutputTokens: 3, CostUSD: 0.125})
			}
		}
		settle(t, s, auth.SettleParams{KeyID: keys[2], Used: 5, Model: model(), InputTokens: 2, OutputTokens: 3})
		want := []auth.UsageRow{
			{KeyID: keys[0], Requests: 1, InputTokens: 2, OutputTokens: 3, CostUSD: 0.125},
			{KeyID: keys[1], Requests: 2, InputTokens: 4, OutputTokens: 6, CostUSD: 0.25},
		}
		if want[0].KeyID > want[1].KeyID {
			want[0], want[1] = want[1], want[0]
		}
		if diff := cmp.Diff(want, usage(t, s, auth.UsageParams{Model: m, GroupBy: auth.GroupByKey}), rowOpts); diff != "" {
			t.Errorf("Usage by key mismatch (-want +got):\n%s", diff)
		}
	})

	// The sums of the usage rows saturate: they never wrap negative nor
	// fail (PostgreSQL's sum of bigints overflowed its cast, SQLite's
	// total() turned into the lowest int64), and a cost is never NaN or
	// infinite, which JSON cannot carry.
	t.Run("SumsSaturate", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 1)
		m := model()
		for _, cost := range []float64{math.MaxFloat64, math.Inf(1), math.NaN(), -1} {
			settle(t, s, auth.SettleParams{KeyID: keys[0], Used: math.MaxInt64, Model: m,
				InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64, CostUSD: cost})
		}
		settle(t, s, auth.SettleParams{KeyID: keys[0], Used: 1, Model: m, InputTokens: -5, OutputTokens: 1})
		want := []auth.UsageRow{{Model: m, Requests: 5, InputTokens: math.MaxInt64, OutputTokens: math.MaxInt64, CostUSD: math.MaxFloat64}}
		for _, g := range []auth.UsageGroup{auth.GroupByModel, auth.GroupByDay, auth.GroupByKey} {
			got := usage(t, s, auth.UsageParams{KeyID: keys[0], GroupBy: g})
			require.Len(t, got, 1, "group by %s", g)
			got[0].Day, got[0].KeyID, got[0].Model = "", "", m
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Usage by %s mismatch (-want +got):\n%s", g, diff)
			}
		}
	})

	t.Run("RecordsEveryConcurrentSettlementOnce", func(t *testing.T) {
		t.Parallel()
		s, keys := setup(t, 1)
		m := model()
		const n = 64
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				if err := s.Reserve(ctx, keys[0], 10); err != nil {
					t.Errorf("Reserve: %v", err)
					return
				}
				if _, err := s.Settle(ctx, auth.SettleParams{KeyID: keys[0], Reserved: 10, Used: 3, Model: m, InputTokens: 1, OutputTokens: 2, CostUSD: 0.01}); err != nil {
					t.Errorf("Settle: %v", err)
				}
			})
		}
		wg.Wait()
		want := []auth.UsageRow{{Model: m, Requests: n, InputTokens: n, OutputTokens: 2 * n, CostUSD: n * 0.01}}
		if diff := cmp.Diff(want, usage(t, s, auth.UsageParams{KeyID: keys[0], GroupBy: auth.GroupByModel}), rowOpts); diff != "" {
			t.Errorf("Usage mismatch (-want +got):\n%s", diff)
		}
	})
}
