package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
)

// The tests of the queue of quota calls hold the row of a key locked
// (blockKey), so that the writer's batch waits for the lock: the
// Settles that return meanwhile are queued, not committed.

// queueDB returns a DB in a fresh schema of pool's database, whose
// Settles are answered in memory once a key's quota is known, however
// slow the test, and whose queue holds queueSize calls (0: the default).
func queueDB(t *testing.T, pool *pgxpool.Pool, queueSize int) *DB {
	t.Helper()
	db, err := New(context.Background(), pool, &Options{Schema: "s_" + strings.ToLower(rand.Text()),
		queueSize: queueSize, projectionTTL: time.Hour})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func queuePool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// queueKey stores a key with quota q and returns its secret and id.
func queueKey(t *testing.T, db *DB, q auth.Quota) (secret, id string) {
	t.Helper()
	secret, err := auth.NewSecret()
	require.NoError(t, err)
	id = "key_" + rand.Text()
	require.NoError(t, db.Keys().Add(context.Background(), secret, auth.Key{ID: id, Owner: "o", Quota: q}))
	return secret, id
}

// blockKey locks the row of the key id until the returned function is
// called.
func blockKey(t *testing.T, pool *pgxpool.Pool, db *DB, id string) (unblock func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT 1 FROM `+db.Schema()+`.gk_keys WHERE id = $1 FOR UPDATE`, id)
	require.NoError(t, err)
	done := false
	unblock = func() {
		if !done {
			done = true
			require.NoError(t, tx.Rollback(ctx))
		}
	}
	t.Cleanup(unblock)
	return unblock
}

func usageOf(id string, used int64) auth.SettleParams {
	return auth.SettleParams{KeyID: id, Used: used, Model: "m", InputTokens: used, CostUSD: 0.5}
}

func TestSettleReturnsOnceQueuedAndWaitsForRoomInAFullQueue(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	db := queueDB(t, pool, 3)
	secret, id := queueKey(t, db, auth.LimitedQuota(1000))
	ks := db.Keys()

	q, err := ks.Settle(ctx, usageOf(id, 1)) // the first: waits for its commit, and the quota is known
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 999, Used: 1, CostUSD: 0.5}, q)

	unblock := blockKey(t, pool, db, id)
	// The writer now waits for the row: these return without it, with
	// the quota computed in memory, and fill the queue of 3.
	for i, used := range []int64{2, 3, 4} {
		q, err := ks.Settle(ctx, usageOf(id, used))
		require.NoError(t, err)
		total := int64(1 + (2+used)*(used-1)/2)
		require.Equal(t, auth.Quota{Remaining: 1000 - total, Used: total, CostUSD: 0.5 * float64(i+2)}, q, "Settle %d", i)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = ks.Settle(cancelled, usageOf(id, 100))
	require.ErrorIs(t, err, context.Canceled, "the queue is full: Settle waits for room, here until its context ends")

	got := make(chan error, 1)
	go func() {
		_, err := ks.Settle(ctx, usageOf(id, 5))
		got <- err
	}()
	unblock()
	require.NoError(t, <-got, "the waiting Settle is queued once there is room")

	k, err := ks.Lookup(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 1000 - 15, Used: 15, CostUSD: 2.5}, k.Quota, "every queued Settle; not the one refused")
	rows, err := ks.Usage(ctx, auth.UsageParams{KeyID: id, GroupBy: auth.GroupByKey})
	require.NoError(t, err)
	require.Equal(t, []auth.UsageRow{{KeyID: id, Requests: 5, InputTokens: 15, CostUSD: 2.5}}, rows)
}

func TestCloseCommitsTheQueuedSettlements(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	db := queueDB(t, pool, 0)
	_, id := queueKey(t, db, auth.LimitedQuota(100))
	ks := db.Keys()
	_, err := ks.Settle(ctx, usageOf(id, 1))
	require.NoError(t, err)

	unblock := blockKey(t, pool, db, id)
	for range 3 {
		_, err := ks.Settle(ctx, usageOf(id, 10))
		require.NoError(t, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	for { // until Close has begun: the Settles are still queued
		db.batcher.mu.Lock()
		c := db.batcher.closed
		db.batcher.mu.Unlock()
		if c {
			break
		}
		runtime.Gosched()
	}
	_, err = ks.Settle(ctx, usageOf(id, 1))
	require.ErrorIs(t, err, errClosed, "a closing DB takes no more calls")
	unblock()
	require.NoError(t, <-closed)

	var used, rows int64
	var cost float64
	require.NoError(t, pool.QueryRow(ctx, `SELECT used, cost_usd, (SELECT count(*) FROM `+db.Schema()+`.gk_usage)
		FROM `+db.Schema()+`.gk_keys WHERE id = $1`, id).Scan(&used, &cost, &rows))
	require.Equal(t, int64(31), used, "the quota of every Settle, in the database")
	require.InDelta(t, 2.0, cost, 1e-9)
	require.Equal(t, int64(4), rows, "a usage row per Settle")
}

func TestReadsSeeEveryReturnedSettle(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	const want = 1 + 3*10 // used by the Settles of each case
	tests := []struct {
		name string
		read func(t *testing.T, ks *KeyStore, secret, id string) int64 // the key's Used as read
	}{
		{"Lookup", func(t *testing.T, ks *KeyStore, secret, _ string) int64 {
			k, err := ks.Lookup(ctx, secret)
			require.NoError(t, err)
			return k.Quota.Used
		}},
		{"GetKey", func(t *testing.T, ks *KeyStore, _, id string) int64 {
			k, err := ks.GetKey(ctx, id)
			require.NoError(t, err)
			return k.Quota.Used
		}},
		{"ListKeys", func(t *testing.T, ks *KeyStore, _, _ string) int64 {
			keys, err := ks.ListKeys(ctx, auth.ListKeysParams{})
			require.NoError(t, err)
			require.Len(t, keys, 1)
			return keys[0].Quota.Used
		}},
		{"Usage", func(t *testing.T, ks *KeyStore, _, id string) int64 {
			rows, err := ks.Usage(ctx, auth.UsageParams{KeyID: id, GroupBy: auth.GroupByKey})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			return rows[0].InputTokens
		}},
		{"Flush", func(t *testing.T, ks *KeyStore, _, id string) int64 {
			require.NoError(t, ks.Flush(ctx))
			var used int64
			require.NoError(t, pool.QueryRow(ctx, `SELECT used FROM `+ks.db.Schema()+`.gk_keys WHERE id = $1`, id).Scan(&used))
			return used
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := queueDB(t, pool, 0)
			secret, id := queueKey(t, db, auth.LimitedQuota(100))
			ks := db.Keys()
			_, err := ks.Settle(ctx, usageOf(id, 1))
			require.NoError(t, err)
			unblock := blockKey(t, pool, db, id)
			for range 3 {
				_, err := ks.Settle(ctx, usageOf(id, 10))
				require.NoError(t, err)
			}
			// The read starts while the Settles wait for the row: it
			// must wait for them, or it reads 1.
			got := make(chan int64, 1)
			go func() { got <- tc.read(t, ks, secret, id) }()
			unblock()
			require.Equal(t, int64(want), <-got)
		})
	}
}

func TestAReserveSeesTheSettlesQueuedBeforeIt(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	db := queueDB(t, pool, 0)
	secret, id := queueKey(t, db, auth.LimitedQuota(10))
	ks := db.Keys()
	require.NoError(t, ks.Reserve(ctx, id, 10))
	_, err := ks.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 10}) // learns the quota
	require.NoError(t, err)
	require.NoError(t, ks.Reserve(ctx, id, 10))
	require.ErrorIs(t, ks.Reserve(ctx, id, 1), auth.ErrQuotaExceeded, "all of it reserved")

	unblock := blockKey(t, pool, db, id)
	q, err := ks.Settle(ctx, auth.SettleParams{KeyID: id, Reserved: 10, Used: 4})
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 6, Used: 4}, q, "answered in memory: the Reserves of this KeyStore are in it")
	reserved := make(chan error, 1)
	go func() { reserved <- ks.Reserve(ctx, id, 6) }()
	unblock()
	require.NoError(t, <-reserved, "the reservation released by the queued Settle is free for the Reserve behind it")
	k, err := ks.Lookup(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 6, Reserved: 6, Used: 4}, k.Quota)
}

func TestAQueuedSettleIsRetriedWhileTheDatabaseCannotBeReached(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	name := cfg.ConnConfig.Database
	admin, err := pgx.Connect(ctx, os.Getenv(pgtest.EnvVar))
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close(ctx) })
	allow := func(allowed bool) {
		_, err := admin.Exec(ctx, fmt.Sprintf(`ALTER DATABASE %s WITH ALLOW_CONNECTIONS %t`, name, allowed))
		require.NoError(t, err)
		if !allowed {
			_, err = admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name)
			require.NoError(t, err)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	logs := &recorder{}
	db, err := New(ctx, pool, &Options{Schema: "s_" + strings.ToLower(rand.Text()), projectionTTL: time.Hour, Logger: slog.New(logs)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	secret, id := queueKey(t, db, auth.LimitedQuota(100))
	ks := db.Keys()
	_, err = ks.Settle(ctx, usageOf(id, 1))
	require.NoError(t, err)

	allow(false) // the gateway's connections are cut, and new ones refused
	for range 2 {
		_, err := ks.Settle(ctx, usageOf(id, 10))
		require.NoError(t, err, "queued: the writer keeps it and tries again")
	}
	require.Equal(t, 2, ks.PendingUsage())
	require.Error(t, ks.Reserve(ctx, id, 1), "a Reserve waits for its batch, and fails with it")
	for ks.FailedUsageWrites() < 4 { // the writer keeps trying
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, []string{"ERROR postgres: the quota writer cannot reach the database; it keeps its settlements and tries again pending=2"},
		logs.writer("pending"), "logged once per minute, not at each try")
	allow(true)
	require.NoError(t, ks.Flush(ctx), "the writer got through")
	require.Zero(t, ks.PendingUsage())
	k, err := ks.Lookup(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 79, Used: 21, CostUSD: 1.5}, k.Quota, "both queued Settles, committed once the database came back")
	require.Equal(t, []string{
		"ERROR postgres: the quota writer cannot reach the database; it keeps its settlements and tries again",
		"INFO postgres: the quota writer reaches the database again",
	}, logs.writer(), "and once when it gets through")
}

// recorder is a slog.Handler that keeps the records.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec.Clone())
	return nil
}

// writer returns the level and message of each record of the quota
// writer (not the heartbeat's), followed by the attributes named.
func (r *recorder) writer(attrs ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		if !strings.HasPrefix(rec.Message, "postgres: the quota writer") {
			continue
		}
		line := rec.Level.String() + " " + rec.Message
		rec.Attrs(func(a slog.Attr) bool {
			if slices.Contains(attrs, a.Key) {
				line += " " + a.String()
			}
			return true
		})
		out = append(out, line)
	}
	return out
}

func TestAFullQueueRefusesNewRequests(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	db := queueDB(t, pool, 2)
	_, id := queueKey(t, db, auth.LimitedQuota(1000))
	ks := db.Keys()
	_, err := ks.Settle(ctx, usageOf(id, 1)) // the quota is known: the next Settles return when queued
	require.NoError(t, err)
	unlimited, uid := queueKey(t, db, auth.Quota{Unlimited: true})
	_, err = ks.Lookup(ctx, unlimited) // Reserve trusts it unlimited without asking the database
	require.NoError(t, err)

	unblock := blockKey(t, pool, db, id)
	for range 2 {
		_, err := ks.Settle(ctx, usageOf(id, 1))
		require.NoError(t, err)
	}
	require.Equal(t, 2, ks.PendingUsage())
	require.ErrorIs(t, ks.Reserve(ctx, id, 1), ErrBacklog, "no room to settle it: refused")
	require.ErrorIs(t, ks.Reserve(ctx, uid, 1), ErrBacklog, "an unlimited key too")
	unblock()
	require.NoError(t, ks.Flush(ctx))
	require.NoError(t, ks.Reserve(ctx, id, 1), "room again")
}

func TestCloseGivesUpOnSettlementsItCannotWriteAndSaysSo(t *testing.T) {
	ctx := context.Background()
	own, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	db, err := New(ctx, own, &Options{Schema: "s_" + strings.ToLower(rand.Text()), projectionTTL: time.Hour, closeTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	_, id := queueKey(t, db, auth.LimitedQuota(100))
	ks := db.Keys()
	_, err = ks.Settle(ctx, usageOf(id, 1))
	require.NoError(t, err)

	own.Close() // the database can no longer be reached, for good
	for range 2 {
		_, err := ks.Settle(ctx, usageOf(id, 10))
		require.NoError(t, err)
	}
	err = db.Close()
	require.ErrorContains(t, err, "2 settlements could not be written", "Close gives up after its bound, and says so")
}

func TestPermanentTellsAStatementsErrorFromAnUnreachableDatabase(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "22008"}, true},  // datetime_field_overflow
		{&pgconn.PgError{Code: "23514"}, true},  // check_violation
		{&pgconn.PgError{Code: "42883"}, true},  // undefined_function
		{&pgconn.PgError{Code: "57P01"}, false}, // admin_shutdown
		{&pgconn.PgError{Code: "40P01"}, false}, // deadlock_detected
		{&pgconn.PgError{Code: "08006"}, false}, // connection_failure
		{&pgconn.PgError{Code: "53300"}, false}, // too_many_connections
		{fmt.Errorf("batch: %w", &pgconn.PgError{Code: "22003"}), true},
		{&pgconn.ConnectError{Config: &pgconn.Config{}}, false},
		{context.DeadlineExceeded, false},
		{errors.New("closed pool"), false},
		{fmt.Errorf("%w: %w (asking: %w)", errUnknownOutcome, context.DeadlineExceeded, &pgconn.PgError{Code: "22023"}), false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, permanent(tc.err), "%v", tc.err)
	}
}
