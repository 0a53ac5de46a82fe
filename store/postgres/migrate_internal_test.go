package postgres

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
)

// TestUpgradeFromTheFirstSchema: a schema made by a gateway of schema
// version 1 (keys without budgets, costs or creation times; no usage
// table; the first gk_settle) is migrated by New with its keys and their
// usage intact, and records usage from then on.
func TestUpgradeFromTheFirstSchema(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	schema := "s_" + strings.ToLower(rand.Text())
	s := pgx.Identifier{schema}.Sanitize()

	ms, err := migrations()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(ms), 2)
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+s)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `CREATE TABLE `+s+`.gk_schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`)
	require.NoError(t, err)
	require.NoError(t, apply(ctx, conn.Conn(), s, ms[0]))
	_, err = conn.Exec(ctx, `INSERT INTO `+s+`.gk_keys (id, secret_hash, owner, unlimited, remaining, used)
		VALUES ('old', $1, 'o', false, 60, 40), ('free', $2, 'o', true, 0, 7)`, auth.HashSecret("sk-old"), auth.HashSecret("sk-free"))
	require.NoError(t, err)
	conn.Release()

	db, err := New(ctx, pool, &Options{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	k, err := db.Keys().Lookup(ctx, "sk-old")
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 60, Used: 40}, k.Quota)
	require.Equal(t, int64(100), k.Granted, "granted what it had left plus what it used")
	free, err := db.Keys().Lookup(ctx, "sk-free")
	require.NoError(t, err)
	require.Zero(t, free.Granted, "an unlimited key is granted nothing")
	q, err := db.Keys().Settle(ctx, auth.SettleParams{KeyID: "old", Used: 5, Model: "m", InputTokens: 2, OutputTokens: 3, CostUSD: 0.5})
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 55, Used: 45, CostUSD: 0.5}, q)
	rows, err := db.Keys().Usage(ctx, auth.UsageParams{KeyID: "old", GroupBy: auth.GroupByModel})
	require.NoError(t, err)
	require.Equal(t, []auth.UsageRow{{Model: "m", Requests: 1, InputTokens: 2, OutputTokens: 3, CostUSD: 0.5}}, rows)
}
