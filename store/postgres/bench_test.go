package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// The hot paths of a gateway on PostgreSQL, one store operation each,
// from parallel goroutines:
//
//	go test -run '^$' -bench . -cpu 32 ./store/postgres   # GATEWAYKIT_TEST_POSTGRES set
func BenchmarkHotPaths(b *testing.B) {
	pool := testPool(b)
	db := newDB(b, pool, nil)
	ctx := context.Background()
	secret, err := auth.NewSecret()
	require.NoError(b, err)
	require.NoError(b, db.Keys().PutKey(ctx, secret, auth.Key{ID: "key_bench", Owner: "o", Quota: auth.UnlimitedQuota()}))
	limited, err := auth.NewSecret()
	require.NoError(b, err)
	require.NoError(b, db.Keys().PutKey(ctx, limited, auth.Key{ID: "key_limited", Owner: "o", Quota: auth.LimitedQuota(1 << 60)}))
	task := videostest.NewTask("o", 0)
	require.NoError(b, db.Tasks().Create(ctx, task))

	b.Run("KeyLookup", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := db.Keys().Lookup(ctx, secret); err != nil {
					b.Error(err)
				}
			}
		})
	})
	for _, id := range []string{"key_bench", "key_limited"} {
		b.Run("ReserveAndSettle/"+id, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := db.Keys().Reserve(ctx, id, 10); err != nil {
						b.Error(err)
					}
					if _, err := db.Keys().Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 10, Used: 3}); err != nil {
						b.Error(err)
					}
				}
			})
		})
	}
	b.Run("TaskGet", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := db.Tasks().Get(ctx, "o", task.ID); err != nil {
					b.Error(err)
				}
			}
		})
	})
	b.Run("TaskCreate", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := db.Tasks().Create(ctx, videostest.NewTask("o", 0)); err != nil {
					b.Error(err)
				}
			}
		})
	})
}
