package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
)

// TestEveryReturnedSettleIsInTheFile settles concurrently, with and
// without a commit delay, and with PutKey of the same key in between,
// closes the DB, then reads the file through a second DB, as the next
// process would: every Settle that returned is there (what the writer
// had not yet committed, Close wrote).
func TestEveryReturnedSettleIsInTheFile(t *testing.T) {
	t.Parallel()
	const goroutines, perGoroutine, used, budget = 32, 20, 3, 1_000_000
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		putKey bool
	}{
		{"DefaultDelay", 0, false},
		{"NoDelay", -1, false},
		{"LongDelay", 20 * time.Millisecond, false},
		{"WithPutKeyMeanwhile", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "gateway.db")
			db, err := sqlite.Open(ctx, path, &sqlite.Options{CommitDelay: tc.delay})
			require.NoError(t, err)
			seed := authtest.NewSeed(t, auth.Key{ID: "key_1", Owner: "o", Quota: auth.LimitedQuota(budget)})
			require.NoError(t, db.Keys().PutKey(ctx, seed.Secret, seed.Key))

			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Go(func() {
					for i := range perGoroutine {
						if err := db.Keys().Reserve(ctx, "key_1", 10); err != nil {
							t.Errorf("Reserve: %v", err)
							return
						}
						if _, err := db.Keys().Settle(ctx, auth.SettleParams{KeyID: "key_1", Reserved: 10, Used: used}); err != nil {
							t.Errorf("Settle: %v", err)
							return
						}
						if tc.putKey && g == 0 && i%5 == 0 {
							if err := db.Keys().PutKey(ctx, seed.Secret, seed.Key); err != nil {
								t.Errorf("PutKey: %v", err)
								return
							}
						}
					}
				})
			}
			wg.Wait()
			require.NoError(t, db.Close()) // which writes what is left

			again, err := sqlite.Open(ctx, path, nil)
			require.NoError(t, err)
			t.Cleanup(func() { again.Close() })
			k, err := again.Keys().Lookup(ctx, seed.Secret)
			require.NoError(t, err)
			const total = goroutines * perGoroutine * used
			require.Equal(t, auth.Quota{Remaining: budget - total, Used: total}, k.Quota)
		})
	}
}

// TestSettleReachesTheFileBeforeClose: the writer commits a Settle on its
// own, within a commit delay, without waiting for Close; a crash would
// lose no more than that.
func TestSettleReachesTheFileBeforeClose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	seed := authtest.NewSeed(t, auth.Key{ID: "key_1", Owner: "o", Quota: auth.LimitedQuota(100)})
	require.NoError(t, db.Keys().PutKey(ctx, seed.Secret, seed.Key))
	_, err = db.Keys().Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: 7})
	require.NoError(t, err)

	file, err := sql.Open("sqlite", path+"?mode=ro")
	require.NoError(t, err)
	t.Cleanup(func() { file.Close() })
	require.Eventually(t, func() bool {
		var used, remaining int64
		err := file.QueryRowContext(ctx, `SELECT used, remaining FROM keys WHERE id = 'key_1'`).Scan(&used, &remaining)
		return err == nil && used == 7 && remaining == 93
	}, 10*time.Second, 5*time.Millisecond, "the Settle is in the file")
}

// TestUsageRowsReachTheFile: the usage rows and costs of Settles ride the
// group commits of the quotas, and Close writes what is left: the next
// process reads them all.
func TestUsageRowsReachTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sqlite.Open(ctx, path, &sqlite.Options{CommitDelay: 20 * time.Millisecond})
	require.NoError(t, err)
	seed := authtest.NewSeed(t, auth.Key{ID: "key_1", Quota: auth.Quota{Unlimited: true, BudgetUSD: 5}})
	require.NoError(t, db.Keys().PutKey(ctx, seed.Secret, seed.Key))
	const n = 50
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := db.Keys().Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: 3, Model: "m", InputTokens: 1, OutputTokens: 2, CostUSD: 0.01}); err != nil {
				t.Errorf("Settle: %v", err)
			}
		})
	}
	wg.Wait()
	require.NoError(t, db.Close())

	again, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { again.Close() })
	rows, err := again.Keys().Usage(ctx, auth.UsageParams{KeyID: "key_1", GroupBy: auth.GroupByModel})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, auth.UsageRow{Model: "m", Requests: n, InputTokens: n, OutputTokens: 2 * n, CostUSD: rows[0].CostUSD}, rows[0])
	require.InDelta(t, n*0.01, rows[0].CostUSD, 1e-9)
	k, err := again.Keys().Lookup(ctx, seed.Secret)
	require.NoError(t, err)
	require.InDelta(t, n*0.01, k.Quota.CostUSD, 1e-9)
	require.Equal(t, 5.0, k.Quota.BudgetUSD)
}
