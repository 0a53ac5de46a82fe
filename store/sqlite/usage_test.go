package sqlite_test

import (
	"context"
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
// then reads the file through a second DB, as a process started after a
// crash would: every Settle that returned is there. (Close writes
// nothing: what Settle returned is already in the file.)
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
			require.NoError(t, db.Close()) // which writes nothing more

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
