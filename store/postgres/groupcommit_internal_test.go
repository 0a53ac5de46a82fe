package postgres

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
)

// TestGroupCommitGivesEachCallItsOwnResult runs batches directly, so
// that several Settles of one key share one statement whatever the
// scheduling, and checks each call's result against the same calls made
// one at a time.
func TestGroupCommitGivesEachCallItsOwnResult(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)

	settle := func(id string, reserved, used int64) *quotaOp {
		return &quotaOp{settle: true, keyID: id, p: auth.SettleParams{KeyID: id, Reserved: reserved, Used: used}}
	}
	reserve := func(id string, amount int64) *quotaOp { return &quotaOp{keyID: id, amount: amount} }
	type want struct {
		status  string // Reserve
		found   bool
		covered bool
		q       auth.Quota
	}
	ok := func(q auth.Quota) want { return want{found: true, covered: true, q: q} }
	tests := []struct {
		name     string
		budget   auth.Quota
		reserved int64 // reserved by this instance before the batch
		ops      func(id string) []*quotaOp
		want     []want
	}{
		{
			name:   "SettlesOfALimitedKeyOverdrawOnlyAtTheirTurn",
			budget: auth.LimitedQuota(100),
			ops: func(id string) []*quotaOp {
				return []*quotaOp{settle(id, 0, 30), settle(id, 0, 50), settle(id, 0, 30), settle(id, 0, 0)}
			},
			want: []want{
				ok(auth.Quota{Remaining: 70, Used: 30}),
				ok(auth.Quota{Remaining: 20, Used: 80}),
				{found: true, covered: false, q: auth.Quota{Remaining: 0, Used: 110}},
				ok(auth.Quota{Remaining: 0, Used: 110}),
			},
		},
		{
			name:     "SettlesReleaseTheReservationInTurn",
			budget:   auth.LimitedQuota(100),
			reserved: 40,
			ops: func(id string) []*quotaOp {
				return []*quotaOp{settle(id, 10, 5), settle(id, 50, 5)}
			},
			want: []want{
				ok(auth.Quota{Remaining: 95, Reserved: 30, Used: 5}),
				ok(auth.Quota{Remaining: 90, Reserved: 0, Used: 10}),
			},
		},
		{
			name:   "ReservesBetweenSettlesSeeTheSettlesBefore",
			budget: auth.LimitedQuota(10),
			ops: func(id string) []*quotaOp {
				return []*quotaOp{reserve(id, 10), reserve(id, 1), settle(id, 10, 4), reserve(id, 1)}
			},
			want: []want{
				{status: "ok"},
				{status: "exceeded"},
				ok(auth.Quota{Remaining: 6, Used: 4}),
				{status: "ok"},
			},
		},
		{
			name:   "UnlimitedKeysAddUpTheirUsage",
			budget: auth.UnlimitedQuota(),
			ops: func(id string) []*quotaOp {
				return []*quotaOp{settle(id, 0, 3), settle(id, 7, 4)}
			},
			want: []want{
				ok(auth.Quota{Unlimited: true, Used: 3}),
				ok(auth.Quota{Unlimited: true, Used: 7}),
			},
		},
		{
			name:   "AnUnknownKeyIsNotFoundWithoutFailingTheBatch",
			budget: auth.LimitedQuota(10),
			ops: func(id string) []*quotaOp {
				return []*quotaOp{settle("key_unknown", 0, 1), settle("key_unknown", 0, 2), settle(id, 0, 1), reserve("key_unknown", 1)}
			},
			want: []want{{}, {}, ok(auth.Quota{Remaining: 9, Used: 1}), {status: "not_found"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := New(ctx, pool, &Options{Schema: "s_" + strings.ToLower(rand.Text())})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, db.Close()) })
			id := "key_" + rand.Text()
			secret, err := auth.NewSecret()
			require.NoError(t, err)
			require.NoError(t, db.Keys().PutKey(ctx, secret, auth.Key{ID: id, Quota: tc.budget}))
			if tc.reserved > 0 {
				require.NoError(t, db.Keys().Reserve(ctx, id, tc.reserved))
			}
			ops := tc.ops(id)
			_, _, err = db.batcher.send(ctx, ops)
			require.NoError(t, err, "the batch as one transaction")
			for i, op := range ops {
				got := want{status: op.status, found: op.found, covered: op.covered, q: op.q}
				require.Equal(t, tc.want[i], got, "call %d", i)
			}
		})
	}
}
