package postgres_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/postgres"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// terminateBackends ends every connection to pool's database but its
// own, as a restart of the server does (SQLSTATE 57P01 admin_shutdown),
// once pool holds a few idle connections: the next call on each fails.
func terminateBackends(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 { // several idle connections, used within the last second (the pool pings older ones)
		wg.Go(func() {
			_, err := pool.Exec(ctx, "SELECT pg_sleep(0.01)")
			require.NoError(t, err)
		})
	}
	wg.Wait()
	c, err := pgx.Connect(ctx, pool.Config().ConnString())
	require.NoError(t, err)
	defer c.Close(ctx)
	var n int
	require.NoError(t, c.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n))
	require.Positive(t, n, "the pool's connections were ended")
}

// TestASafeOperationSurvivesAServerRestart ends every connection of the
// pool between two operations, as a restart of PostgreSQL does: the
// operations that may run twice (doc.go, "Lost connections") succeed on
// a new connection instead of failing.
func TestASafeOperationSurvivesAServerRestart(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()
	type bundle struct {
		db     *postgres.DB
		secret string
		id     string // the key's
		task   *videos.Task
	}
	// setup makes a DB with a key of budget 1000 (whose quota its
	// KeyStore knows, so that Settles are written behind), a stored
	// response, a claimed task and its content.
	setup := func(t *testing.T) *bundle {
		b := &bundle{db: newDB(t, pool, nil)}
		var err error
		b.secret, err = auth.NewSecret()
		require.NoError(t, err)
		b.id = "key_" + rand.Text()
		ks := b.db.Keys()
		require.NoError(t, ks.Add(ctx, b.secret, auth.Key{ID: b.id, Owner: "o", Quota: auth.LimitedQuota(1000)}))
		_, err = ks.Settle(ctx, auth.SettleParams{KeyID: b.id, Used: 1, Model: "m"})
		require.NoError(t, err)
		require.NoError(t, b.db.Responses().Put(ctx, &responses.StoredResponse{Owner: "o", Response: responses.Response{ID: "resp_1"}}))
		require.NoError(t, b.db.Tasks().Create(ctx, videostest.NewTask("o", 0)))
		b.task, err = b.db.Tasks().Claim(ctx, videos.ClaimParams{Worker: "w", Now: videostest.T0()})
		require.NoError(t, err)
		require.NoError(t, b.db.Contents().Put(ctx, videos.PutParams{TaskID: b.task.ID, Variant: videos.VariantVideo,
			ContentType: "video/mp4", Data: make([]byte, 3000)})) // three chunks of 1 KiB
		return b
	}
	tests := []struct {
		name string
		op   func(t *testing.T, b *bundle)
	}{
		{"Ping", func(t *testing.T, b *bundle) { require.NoError(t, b.db.Ping(ctx)) }},
		{"Lookup", func(t *testing.T, b *bundle) {
			k, err := b.db.Keys().Lookup(ctx, b.secret)
			require.NoError(t, err)
			require.Equal(t, b.id, k.ID)
		}},
		{"Reserve", func(t *testing.T, b *bundle) {
			require.NoError(t, b.db.Keys().Reserve(ctx, b.id, 10))
			k, err := b.db.Keys().GetKey(ctx, b.id)
			require.NoError(t, err)
			require.Equal(t, int64(10), k.Quota.Reserved, "reserved once")
		}},
		{"SettleOfAKeyNotKnown", func(t *testing.T, b *bundle) {
			_, id := addKey(t, b.db, 100)
			terminateBackends(t, pool)
			q, err := b.db.Keys().Settle(ctx, auth.SettleParams{KeyID: id, Used: 5, Model: "m"})
			require.NoError(t, err, "the first Settle of a key waits for its commit")
			require.Equal(t, int64(5), q.Used)
		}},
		{"SettleWrittenBehind", func(t *testing.T, b *bundle) {
			_, err := b.db.Keys().Settle(ctx, auth.SettleParams{KeyID: b.id, Used: 5, Model: "m"})
			require.NoError(t, err)
			require.NoError(t, b.db.Keys().Flush(ctx))
			rows, err := b.db.Keys().Usage(ctx, auth.UsageParams{KeyID: b.id, GroupBy: auth.GroupByKey})
			require.NoError(t, err)
			require.Equal(t, []auth.UsageRow{{KeyID: b.id, Requests: 2, InputTokens: 0}}, rows, "one row per Settle: written once")
		}},
		{"Usage", func(t *testing.T, b *bundle) {
			rows, err := b.db.Keys().Usage(ctx, auth.UsageParams{KeyID: b.id, GroupBy: auth.GroupByKey})
			require.NoError(t, err)
			require.Len(t, rows, 1)
		}},
		{"GetKey", func(t *testing.T, b *bundle) {
			_, err := b.db.Keys().GetKey(ctx, b.id)
			require.NoError(t, err)
		}},
		{"ListKeys", func(t *testing.T, b *bundle) {
			keys, err := b.db.Keys().ListKeys(ctx, auth.ListKeysParams{})
			require.NoError(t, err)
			require.Len(t, keys, 1)
		}},
		{"PutKey", func(t *testing.T, b *bundle) {
			require.NoError(t, b.db.Keys().PutKey(ctx, b.secret, auth.Key{ID: b.id, Owner: "o", Quota: auth.LimitedQuota(2000)}))
			k, err := b.db.Keys().GetKey(ctx, b.id)
			require.NoError(t, err)
			require.Equal(t, int64(1999), k.Quota.Remaining)
		}},
		{"UpdateKey", func(t *testing.T, b *bundle) {
			k, err := b.db.Keys().UpdateKey(ctx, b.id, func(k *auth.Key) error { k.Owner = "p"; return nil })
			require.NoError(t, err)
			require.Equal(t, "p", k.Owner)
		}},
		{"Disable", func(t *testing.T, b *bundle) { require.NoError(t, b.db.Keys().Disable(ctx, b.id)) }},
		{"DeleteKey", func(t *testing.T, b *bundle) { require.NoError(t, b.db.Keys().DeleteKey(ctx, b.id)) }},
		{"Add", func(t *testing.T, b *bundle) {
			secret, err := auth.NewSecret()
			require.NoError(t, err)
			require.NoError(t, b.db.Keys().Add(ctx, secret, auth.Key{ID: "key_new", Owner: "o"}))
		}},
		{"PutResponse", func(t *testing.T, b *bundle) {
			require.NoError(t, b.db.Responses().Put(ctx, &responses.StoredResponse{Owner: "o", Response: responses.Response{ID: "resp_2"}}))
		}},
		{"GetResponse", func(t *testing.T, b *bundle) {
			_, err := b.db.Responses().Get(ctx, "o", "resp_1")
			require.NoError(t, err)
		}},
		{"DeleteResponse", func(t *testing.T, b *bundle) { require.NoError(t, b.db.Responses().Delete(ctx, "o", "resp_1")) }},
		{"CreateTask", func(t *testing.T, b *bundle) {
			require.NoError(t, b.db.Tasks().Create(ctx, videostest.NewTask("o", time.Second)))
		}},
		{"GetTask", func(t *testing.T, b *bundle) {
			_, err := b.db.Tasks().Get(ctx, "o", b.task.ID)
			require.NoError(t, err)
		}},
		{"ListTasks", func(t *testing.T, b *bundle) {
			tasks, _, err := b.db.Tasks().List(ctx, videos.ListParams{Owner: "o"})
			require.NoError(t, err)
			require.Len(t, tasks, 1)
		}},
		{"ClaimTask", func(t *testing.T, b *bundle) {
			require.NoError(t, b.db.Tasks().Create(ctx, videostest.NewTask("o", time.Second)))
			terminateBackends(t, pool)
			_, err := b.db.Tasks().Claim(ctx, videos.ClaimParams{Worker: "w", Now: videostest.T0()})
			require.NoError(t, err)
		}},
		{"RenewTheLease", func(t *testing.T, b *bundle) {
			task, err := b.db.Tasks().Update(ctx, videos.UpdateParams{ID: b.task.ID, Attempt: b.task.Attempts,
				Now: videostest.T0(), Lease: time.Hour, Progress: 40})
			require.NoError(t, err)
			require.Equal(t, 40, task.Progress)
		}},
		{"CompleteTheTask", func(t *testing.T, b *bundle) {
			task, err := b.db.Tasks().Update(ctx, videos.UpdateParams{ID: b.task.ID, Attempt: b.task.Attempts,
				Now: videostest.T0(), Complete: &videos.Completion{}})
			require.NoError(t, err)
			require.Equal(t, videos.StatusCompleted, task.Status)
		}},
		{"DeleteTask", func(t *testing.T, b *bundle) { require.NoError(t, b.db.Tasks().Delete(ctx, "o", b.task.ID)) }},
		{"PutContent", func(t *testing.T, b *bundle) {
			require.NoError(t, b.db.Contents().Put(ctx, videos.PutParams{TaskID: b.task.ID, Variant: videos.VariantThumbnail,
				ContentType: "image/png", Data: []byte("png")}))
		}},
		{"OpenContent", func(t *testing.T, b *bundle) {
			c, err := b.db.Contents().Open(ctx, b.task.ID, videos.VariantVideo)
			require.NoError(t, err)
			defer c.Body.Close()
			_, err = c.Body.Read(make([]byte, 10)) // the first chunk came with Open
			require.NoError(t, err)
			terminateBackends(t, pool)
			data, err := io.ReadAll(c.Body)
			require.NoError(t, err, "the next chunks are read on a new connection")
			require.Len(t, data, 2990)
		}},
		{"DeleteContent", func(t *testing.T, b *bundle) { require.NoError(t, b.db.Contents().Delete(ctx, b.task.ID)) }},
	}
	for _, tc := range tests {
		// One at a time: ending the database's connections ends every
		// subtest's.
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			terminateBackends(t, pool)
			tc.op(t, b)
		})
	}
}

// TestPingFailsWhileWritesFail: a database that answers but takes no
// writes (a standby after a failover: read-only transactions) is not
// ready until a write succeeds; a readiness check tries one.
func TestPingFailsWhileWritesFail(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()
	db := newDB(t, pool, nil)
	_, id := addKey(t, db, 100)
	readOnly := func(on bool) {
		c, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvVar)) // another database of the server
		require.NoError(t, err)
		defer c.Close(ctx)
		_, err = c.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s SET default_transaction_read_only = %t", pgx.Identifier{pool.Config().ConnConfig.Database}.Sanitize(), on))
		require.NoError(t, err)
		pool.Reset() // the setting applies to new connections
	}
	require.NoError(t, db.Ping(ctx))
	readOnly(true)
	require.ErrorContains(t, db.Keys().Reserve(ctx, id, 1), "read-only transaction")
	for _, p := range []interface{ Ping(context.Context) error }{db, db.Keys(), db.Responses(), db.Tasks(), db.Contents()} {
		require.ErrorContains(t, p.Ping(ctx), "postgres: ping: the database cannot be written")
	}
	_, err := db.Keys().GetKey(ctx, id)
	require.NoError(t, err, "reads work")

	readOnly(false)
	require.NoError(t, db.Ping(ctx), "its write went through")
	require.NoError(t, db.Keys().Reserve(ctx, id, 1))
}
