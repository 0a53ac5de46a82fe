package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

func openRaw(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db")+"?_txlock=immediate")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func versions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT version FROM schema_migrations ORDER BY version`)
	require.NoError(t, err)
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		require.NoError(t, rows.Scan(&v))
		vs = append(vs, v)
	}
	require.NoError(t, rows.Err())
	return vs
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first := &fstest.MapFile{Data: []byte(`CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);`)}
	second := &fstest.MapFile{Data: []byte(`ALTER TABLE a ADD COLUMN y INTEGER NOT NULL DEFAULT 2;`)}
	broken := &fstest.MapFile{Data: []byte(`CREATE TABLE b (x INTEGER); THIS IS NOT SQL;`)}

	for _, tc := range []struct {
		name    string
		run     func(t *testing.T, db *sql.DB)
		wantErr string
	}{
		{name: "AppliesEveryMigrationOnceInOrder", run: func(t *testing.T, db *sql.DB) {
			files := fstest.MapFS{"migrations/0002_y.sql": second, "migrations/0001_a.sql": first}
			applied, err := migrate(ctx, db, files)
			require.NoError(t, err)
			require.Equal(t, []string{"0001_a", "0002_y"}, applied)
			applied, err = migrate(ctx, db, files)
			require.NoError(t, err)
			require.Empty(t, applied, "a second run applies nothing")
			var n, y int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*), MAX(y) FROM a`).Scan(&n, &y))
			require.Equal(t, 1, n, "the first migration's insert ran once")
			require.Equal(t, 2, y)
			require.Equal(t, []int{1, 2}, versions(t, db))
		}},
		{name: "AppliesOnlyTheNewMigrations", run: func(t *testing.T, db *sql.DB) {
			_, err := migrate(ctx, db, fstest.MapFS{"migrations/0001_a.sql": first})
			require.NoError(t, err)
			applied, err := migrate(ctx, db, fstest.MapFS{"migrations/0001_a.sql": first, "migrations/0002_y.sql": second})
			require.NoError(t, err)
			require.Equal(t, []string{"0002_y"}, applied)
		}},
		{name: "AFailedMigrationChangesNothing", wantErr: "sqlite: migration 0002_broken:", run: func(t *testing.T, db *sql.DB) {
			_, err := migrate(ctx, db, fstest.MapFS{"migrations/0001_a.sql": first, "migrations/0002_broken.sql": broken})
			require.ErrorContains(t, err, "sqlite: migration 0002_broken:")
			require.Equal(t, []int{1}, versions(t, db))
			var n int
			require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'b'`).Scan(&n))
			require.Zero(t, n, "the failed migration's first statement was rolled back")
		}},
		{name: "RefusesADatabaseNewerThanTheBuild", run: func(t *testing.T, db *sql.DB) {
			_, err := migrate(ctx, db, fstest.MapFS{"migrations/0001_a.sql": first, "migrations/0002_y.sql": second})
			require.NoError(t, err)
			_, err = migrate(ctx, db, fstest.MapFS{"migrations/0001_a.sql": first})
			require.ErrorContains(t, err, "the database's schema is at version 2, newer than this build's 1")
		}},
		{name: "RefusesAGapInVersions", run: func(t *testing.T, db *sql.DB) {
			_, err := migrate(ctx, db, fstest.MapFS{"migrations/0001_a.sql": first, "migrations/0003_y.sql": second})
			require.ErrorContains(t, err, "sqlite: migration 0003_y: want version 2")
		}},
		{name: "RefusesABadName", run: func(t *testing.T, db *sql.DB) {
			_, err := migrate(ctx, db, fstest.MapFS{"migrations/init.sql": first})
			require.ErrorContains(t, err, "sqlite: migration init.sql: the name must be NNNN_name.sql")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, openRaw(t))
		})
	}
}

func TestTheEmbeddedMigrationsAreNumberedWithoutGaps(t *testing.T) {
	t.Parallel()
	ms, err := migrations(migrationFiles)
	require.NoError(t, err)
	require.NotEmpty(t, ms)
	require.Equal(t, "0001_init", ms[0].name)
}

// TestUpgradeFromTheFirstSchema: a file made by a gateway of schema 1
// (keys without budgets, costs or creation times; no usage table) opens
// with its keys and their usage intact, and records usage from then on.
func TestUpgradeFromTheFirstSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path+"?_txlock=immediate")
	require.NoError(t, err)
	raw.SetMaxOpenConns(1)
	first, err := migrationFiles.ReadFile("migrations/0001_init.sql")
	require.NoError(t, err)
	_, err = migrate(ctx, raw, fstest.MapFS{"migrations/0001_init.sql": {Data: first}})
	require.NoError(t, err)
	_, err = raw.Exec(`INSERT INTO keys (id, secret_hash, owner, unlimited, remaining, reserved, used, disabled, allowed_models)
		VALUES ('old', ?, 'o', 0, 60, 0, 40, 0, '[]'), ('free', ?, 'o', 1, 0, 0, 7, 0, '[]')`, auth.HashSecret("sk-old"), auth.HashSecret("sk-free"))
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	k, err := db.Keys().Lookup(ctx, "sk-old")
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 60, Used: 40}, k.Quota)
	require.True(t, k.CreatedAt.IsZero(), "unknown for a key of schema 1")
	require.Equal(t, int64(100), k.Granted, "granted what it had left plus what it used")
	free, err := db.Keys().Lookup(ctx, "sk-free")
	require.NoError(t, err)
	require.Zero(t, free.Granted, "an unlimited key is granted nothing")
	_, err = db.Keys().Settle(ctx, auth.SettleParams{KeyID: "old", Used: 5, Model: "m", InputTokens: 2, OutputTokens: 3, CostUSD: 0.5})
	require.NoError(t, err)
	rows, err := db.Keys().Usage(ctx, auth.UsageParams{KeyID: "old", GroupBy: auth.GroupByModel})
	require.NoError(t, err)
	require.Equal(t, []auth.UsageRow{{Model: "m", Requests: 1, InputTokens: 2, OutputTokens: 3, CostUSD: 0.5}}, rows)
}

// TestUpgradeRebuildsTheKeysTableWithOptionalSecrets: migration 5
// rebuilds the keys table so that a key may have no secret; a key of
// schema 4, every column set, comes through it unchanged, and keys
// without a secret can then be stored beside it.
func TestUpgradeRebuildsTheKeysTableWithOptionalSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	raw, err := sql.Open("sqlite", path+"?_txlock=immediate")
	require.NoError(t, err)
	raw.SetMaxOpenConns(1)
	v4 := fstest.MapFS{}
	for _, name := range []string{"0001_init", "0002_usage", "0003_health", "0004_granted"} {
		b, err := migrationFiles.ReadFile("migrations/" + name + ".sql")
		require.NoError(t, err)
		v4["migrations/"+name+".sql"] = &fstest.MapFile{Data: b}
	}
	_, err = migrate(ctx, raw, v4)
	require.NoError(t, err)
	created := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	expires := created.Add(24 * time.Hour)
	_, err = raw.Exec(`INSERT INTO keys (id, secret_hash, owner, unlimited, remaining, reserved, used, expires_at, disabled,
		rate_requests, rate_period_ns, allowed_models, budget_usd, cost_usd, created_at, granted)
		VALUES ('full', ?, 'acme', 0, 60, 0, 40, ?, 1, 5, ?, '["demo-chat"]', 2.5, 0.75, ?, 100)`,
		auth.HashSecret("sk-full"), expires.Format(time.RFC3339Nano), int64(time.Second), created.UnixNano())
	require.NoError(t, err)
	require.NoError(t, raw.Close())

	db, err := Open(ctx, path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	want := &auth.Key{
		ID: "full", Owner: "acme", Quota: auth.Quota{Remaining: 60, Used: 40, BudgetUSD: 2.5, CostUSD: 0.75},
		Granted: 100, ExpiresAt: expires, Disabled: true, RateLimit: &auth.Limit{Requests: 5, Period: time.Second},
		AllowedModels: []string{"demo-chat"}, CreatedAt: created,
	}
	got, err := db.Keys().Lookup(ctx, "sk-full")
	require.NoError(t, err)
	require.Equal(t, want, got)

	keys := db.Keys()
	require.NoError(t, keys.PutKey(ctx, "", auth.Key{ID: "user_1", Quota: auth.LimitedQuota(30)}))
	require.NoError(t, keys.PutKey(ctx, "", auth.Key{ID: "user_2", Quota: auth.LimitedQuota(30)}))
	k, err := keys.LookupID(ctx, "user_2")
	require.NoError(t, err)
	require.Equal(t, auth.LimitedQuota(30), k.Quota)
	require.ErrorIs(t, keys.Add(ctx, "sk-full", auth.Key{ID: "other", Quota: auth.UnlimitedQuota()}), auth.ErrDuplicateKey,
		"the secrets are still unique")
}
