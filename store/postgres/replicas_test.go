package postgres_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/postgres"
	"github.com/gatewaykit/gatewaykit/videos"
)

// replicas returns n DBs on one fresh schema of pool's database, as n
// gateway processes sharing a database, named A, B, …
func replicas(t *testing.T, pool *pgxpool.Pool, n int) []*postgres.DB {
	t.Helper()
	schema := "s_" + strings.ToLower(rand.Text())
	dbs := make([]*postgres.DB, n)
	for i := range dbs {
		// A TTL of an hour: no heartbeat during the test undoes kill.
		dbs[i] = newDB(t, pool, &postgres.Options{Schema: schema, Instance: string(rune('A' + i)), ReservationTTL: time.Hour})
	}
	return dbs
}

// addKey stores a limited key with budget on db and returns its secret
// and id.
func addKey(t *testing.T, db *postgres.DB, budget int64) (secret, id string) {
	t.Helper()
	secret, err := auth.NewSecret()
	require.NoError(t, err)
	id = "key_" + rand.Text()
	require.NoError(t, db.Keys().Add(context.Background(), secret, auth.Key{ID: id, Owner: "o", Quota: auth.LimitedQuota(budget)}))
	return secret, id
}

// kill makes instance look dead: its heartbeat ran out, as when its
// process was killed ReservationTTL ago.
func kill(t *testing.T, pool *pgxpool.Pool, db *postgres.DB) {
	t.Helper()
	_, err := pool.Exec(context.Background(), `UPDATE `+db.Schema()+`.gk_instances SET expires_at = now() - interval '1 second' WHERE id = $1`, db.Instance())
	require.NoError(t, err)
}

func TestQuotaAcrossReplicas(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()

	t.Run("ConcurrentRequestsOnTwoReplicasOverspendByLessThanOneEstimate", func(t *testing.T) {
		t.Parallel()
		dbs := replicas(t, pool, 2)
		const estimate, budget, requests = 7, 100, 64
		secret, id := addKey(t, dbs[0], budget)
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for i := range requests {
			wg.Go(func() {
				keys := dbs[i%2].Keys()
				err := keys.Reserve(ctx, id, estimate)
				if errors.Is(err, auth.ErrQuotaExceeded) {
					return
				}
				if err != nil {
					t.Errorf("Reserve: %v", err)
					return
				}
				admitted.Add(1)
				if _, err := keys.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: estimate, Used: estimate}); err != nil && !errors.Is(err, auth.ErrQuotaExceeded) {
					t.Errorf("Settle: %v", err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(15), admitted.Load(), "requests admitted: consumed + reserved < 100 for each")
		// Each replica's Settles commit behind; A's Flush makes them
		// seen by B.
		require.NoError(t, dbs[0].Keys().Flush(ctx))
		k, err := dbs[1].Keys().Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 0, Used: 105}, k.Quota)
	})

	t.Run("LookupSumsTheReservationsOfEveryReplica", func(t *testing.T) {
		t.Parallel()
		dbs := replicas(t, pool, 2)
		secret, id := addKey(t, dbs[0], 100)
		require.NoError(t, dbs[0].Keys().Reserve(ctx, id, 30))
		require.NoError(t, dbs[1].Keys().Reserve(ctx, id, 50))
		for _, db := range dbs {
			k, err := db.Keys().Lookup(ctx, secret)
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: 100, Reserved: 80}, k.Quota)
		}
	})

	t.Run("ADeadReplicasReservationsStopCountingAfterItsTTL", func(t *testing.T) {
		t.Parallel()
		dbs := replicas(t, pool, 2)
		secret, id := addKey(t, dbs[0], 100)
		require.NoError(t, dbs[0].Keys().Reserve(ctx, id, 100))
		require.ErrorIs(t, dbs[1].Keys().Reserve(ctx, id, 1), auth.ErrQuotaExceeded, "all reserved by A")
		kill(t, pool, dbs[0])
		require.NoError(t, dbs[1].Keys().Reserve(ctx, id, 10), "A's reservation no longer counts")
		k, err := dbs[1].Keys().Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 10}, k.Quota)
	})

	t.Run("ASettlementOnAnotherReplicaReleasesTheReservation", func(t *testing.T) {
		t.Parallel()
		dbs := replicas(t, pool, 2)
		secret, id := addKey(t, dbs[0], 100)
		require.NoError(t, dbs[0].Keys().Reserve(ctx, id, 40))
		q, err := dbs[1].Keys().Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 40, Used: 25})
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 75, Used: 25}, q)
		k, err := dbs[0].Keys().Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, q, k.Quota)
	})

	t.Run("CloseReleasesTheReplicasReservations", func(t *testing.T) {
		t.Parallel()
		dbs := replicas(t, pool, 2)
		secret, id := addKey(t, dbs[0], 100)
		require.NoError(t, dbs[0].Keys().Reserve(ctx, id, 60))
		require.NoError(t, dbs[1].Keys().Reserve(ctx, id, 5))
		require.NoError(t, dbs[0].Close())
		k, err := dbs[1].Keys().Lookup(ctx, secret)
		require.NoError(t, err)
		require.Equal(t, auth.Quota{Remaining: 100, Reserved: 5}, k.Quota)
	})
}

func TestMigrate(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()

	t.Run("ReplicasStartingTogetherMigrateOnce", func(t *testing.T) {
		t.Parallel()
		schema := "s_" + strings.ToLower(rand.Text())
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if err := postgres.Migrate(ctx, pool, schema); err != nil {
					t.Errorf("Migrate: %v", err)
				}
			})
		}
		wg.Wait()
		var versions []int32
		rows, err := pool.Query(ctx, `SELECT version FROM `+schema+`.gk_schema_migrations ORDER BY version`)
		require.NoError(t, err)
		for rows.Next() {
			var v int32
			require.NoError(t, rows.Scan(&v))
			versions = append(versions, v)
		}
		require.NoError(t, rows.Err())
		require.NotEmpty(t, versions)
		require.Equal(t, int32(postgres.SchemaVersion()), versions[len(versions)-1])
		for i, v := range versions {
			require.Equal(t, int32(i+1), v, "each version applied once, in order")
		}
	})

	t.Run("RefusesASchemaFromANewerRelease", func(t *testing.T) {
		t.Parallel()
		schema := "s_" + strings.ToLower(rand.Text())
		require.NoError(t, postgres.Migrate(ctx, pool, schema))
		_, err := pool.Exec(ctx, `INSERT INTO `+schema+`.gk_schema_migrations (version, name) VALUES (9999, 'future')`)
		require.NoError(t, err)
		err = postgres.Migrate(ctx, pool, schema)
		require.ErrorContains(t, err, "newer than this binary's")
	})
}

func TestOpenRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		dsn  string
		opts *postgres.Options
		want string
	}{
		{name: "MalformedDSN", dsn: "postgres://user:s3cret@[::1", want: "malformed connection string"},
		{name: "TinyChunks", dsn: "postgres://127.0.0.1:1/x", opts: &postgres.Options{ChunkSize: 10}, want: "ChunkSize"},
		{name: "TinyTTL", dsn: "postgres://127.0.0.1:1/x", opts: &postgres.Options{ReservationTTL: 1}, want: "ReservationTTL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := postgres.Open(ctx, tc.dsn, tc.opts)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "s3cret")
		})
	}
}

func TestKeyStoreKeepsOnlyTheHashOfASecret(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()
	db := newDB(t, pool, nil)
	secret, _ := addKey(t, db, 10)
	var dump string
	require.NoError(t, pool.QueryRow(ctx, `SELECT string_agg(k::text, ' ') FROM `+db.Schema()+`.gk_keys k`).Scan(&dump))
	require.NotContains(t, dump, secret)
	require.NotContains(t, dump, strings.TrimPrefix(secret, auth.KeyPrefix))
	require.Contains(t, dump, auth.HashSecret(secret))
}

func TestContentStoreReadsLargeContentInChunks(t *testing.T) {
	pool := testPool(t)
	ctx := context.Background()
	db := newDB(t, pool, &postgres.Options{ChunkSize: 1024})
	data := make([]byte, 5000) // five chunks, the last one short
	_, _ = rand.Read(data)
	id := videos.NewID()
	require.NoError(t, db.Contents().Put(ctx, videos.PutParams{TaskID: id, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: data}))

	tests := []struct {
		name   string
		offset int64
		whence int
		n      int
		want   []byte
	}{
		{name: "Whole", offset: 0, whence: io.SeekStart, n: len(data), want: data},
		{name: "AcrossAChunkBoundary", offset: 1000, whence: io.SeekStart, n: 100, want: data[1000:1100]},
		{name: "FromTheEnd", offset: -10, whence: io.SeekEnd, n: 10, want: data[4990:]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := db.Contents().Open(ctx, id, videos.VariantVideo)
			require.NoError(t, err)
			defer c.Body.Close()
			require.Equal(t, int64(len(data)), c.Size)
			_, err = c.Body.Seek(tc.offset, tc.whence)
			require.NoError(t, err)
			got := make([]byte, tc.n)
			_, err = io.ReadFull(c.Body, got)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}

	t.Run("AReaderOfReplacedContentFailsRatherThanMixingVersions", func(t *testing.T) {
		c, err := db.Contents().Open(ctx, id, videos.VariantVideo)
		require.NoError(t, err)
		defer c.Body.Close()
		require.NoError(t, db.Contents().Put(ctx, videos.PutParams{TaskID: id, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: bytes.Repeat([]byte{1}, 5000)}))
		_, err = io.ReadAll(c.Body)
		require.ErrorContains(t, err, "replaced or deleted")
	})
}
