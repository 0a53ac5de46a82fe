package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

func TestLostConnTellsABrokenConnectionFromAStatementsError(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01"}, true}, // admin_shutdown: a restart, pg_terminate_backend
		{&pgconn.PgError{Code: "57P02"}, true}, // crash_shutdown
		{&pgconn.PgError{Code: "57P03"}, true}, // cannot_connect_now: starting up
		{&pgconn.PgError{Code: "08006"}, true}, // connection_failure
		{&pgconn.PgError{Code: "08003"}, true}, // connection_does_not_exist
		{&pgconn.ConnectError{Config: &pgconn.Config{}}, true},
		{fmt.Errorf("query: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{io.ErrUnexpectedEOF, true},
		{pgconn.ErrConnClosed, true},
		{&pgconn.PgError{Code: "57014"}, false}, // query_canceled
		{&pgconn.PgError{Code: "57P04"}, false}, // database_dropped: a new connection would not help
		{&pgconn.PgError{Code: "23505"}, false}, // unique_violation
		{&pgconn.PgError{Code: "40001"}, false}, // serialization_failure: the statement ran
		{context.DeadlineExceeded, false},
		{errors.New("closed pool"), false},
		{nil, false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, lostConn(tc.err), "%v", tc.err)
	}
}

// TestCommittedReadsTheOutcomeOfATransaction: txid_status tells a batch
// whose COMMIT's answer was lost whether it committed.
func TestCommittedReadsTheOutcomeOfATransaction(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	db := queueDB(t, pool, 0)

	var done, aborted, open int64
	require.NoError(t, pool.QueryRow(ctx, `SELECT txid_current()`).Scan(&done))
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&aborted))
	require.NoError(t, tx.Rollback(ctx))
	tx, err = pool.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	require.NoError(t, tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&open))

	committed, err := db.batcher.committed(ctx, done)
	require.NoError(t, err)
	require.True(t, committed)
	committed, err = db.batcher.committed(ctx, aborted)
	require.NoError(t, err)
	require.False(t, committed)
	_, err = db.batcher.committed(ctx, open)
	require.ErrorIs(t, err, errUnknownOutcome, "still in progress: it may commit yet")
}

// queuedSettle puts p in b's state as a Settle that returned when queued
// (it holds a place in the queue), with xid, but not in the queue: the
// test hands it to b.run itself.
func queuedSettle(t *testing.T, b *quotaBatcher, p auth.SettleParams, xid int64) *quotaOp {
	t.Helper()
	require.NoError(t, b.acquire(context.Background()))
	op := &quotaOp{settle: true, async: true, keyID: p.KeyID, p: p, xid: xid, done: make(chan struct{})}
	b.mu.Lock()
	st := b.stateLocked(p.KeyID)
	op.gen = st.gen
	st.inflight++
	st.pend.add(p)
	b.mu.Unlock()
	return op
}

// TestASettleWhoseCommitWasLostIsWrittenOnce: a Settle queued again after
// the answer of its batch's COMMIT was lost is not written again if that
// transaction committed, and is if it did not.
func TestASettleWhoseCommitWasLostIsWrittenOnce(t *testing.T) {
	ctx := context.Background()
	pool := queuePool(t)
	tests := []struct {
		name      string
		committed bool
	}{
		{"TheTransactionCommitted", true},
		{"TheTransactionDidNot", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := queueDB(t, pool, 0)
			_, id := queueKey(t, db, auth.LimitedQuota(100))
			b := db.batcher
			op := queuedSettle(t, b, usageOf(id, 7), 0)
			if tc.committed {
				// The batch went through, and its answer was lost.
				xid, _, err := b.send(ctx, []*quotaOp{op})
				require.NoError(t, err)
				op.xid = xid
			} else {
				// The transaction was rolled back.
				tx, err := pool.Begin(ctx)
				require.NoError(t, err)
				require.NoError(t, tx.QueryRow(ctx, `SELECT txid_current()`).Scan(&op.xid))
				require.NoError(t, tx.Rollback(ctx))
			}
			require.NoError(t, b.run([]*quotaOp{op}))
			<-op.done
			require.NoError(t, op.err)

			rows, err := db.Keys().Usage(ctx, auth.UsageParams{KeyID: id, GroupBy: auth.GroupByKey})
			require.NoError(t, err)
			require.Equal(t, []auth.UsageRow{{KeyID: id, Requests: 1, InputTokens: 7, CostUSD: 0.5}}, rows, "written once")
			k, err := db.Keys().GetKey(ctx, id)
			require.NoError(t, err)
			require.Equal(t, int64(7), k.Quota.Used)
		})
	}
}
