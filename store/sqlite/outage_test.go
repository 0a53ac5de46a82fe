package sqlite_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
)

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

// lines returns each record's level and message, followed by the
// attributes named.
func (r *recorder) lines(attrs ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
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

// TestAUsageWriterThatCannotWrite: while the file cannot be written, the
// usage writer keeps the usage and tries again, logs it once (not at each
// try), reports what waits, refuses new requests past its bound and
// makes the DB not ready; once the file can be written, all of it is.
func TestAUsageWriterThatCannotWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	logs := &recorder{}
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"), &sqlite.Options{MaxPendingUsage: 3, Logger: slog.New(logs)})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	ks := db.Keys()
	seed := authtest.NewSeed(t, auth.Key{ID: "key_1", Owner: "o", Quota: auth.LimitedQuota(1000)})
	require.NoError(t, ks.PutKey(ctx, seed.Secret, seed.Key))
	usage := auth.SettleParams{KeyID: "key_1", Used: 10, Model: "m", InputTokens: 10}

	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA query_only = 1")) // writes fail with SQLITE_READONLY
	for range 3 {
		require.NoError(t, ks.Reserve(ctx, "key_1", 10))
		usage.Reserved = 10
		_, err := ks.Settle(ctx, usage)
		require.NoError(t, err, "a Settle is answered from memory")
	}
	require.Equal(t, 3, ks.PendingUsage())
	for ks.FailedUsageWrites() < 4 { // the writer keeps trying
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, []string{"ERROR sqlite: the usage writer cannot write to the database; it keeps the usage and tries again pending=3"},
		logs.lines("pending"), "logged once per minute, not at each try")
	require.ErrorIs(t, ks.Reserve(ctx, "key_1", 10), sqlite.ErrBacklog, "three rows wait: no more requests")
	_, err = ks.Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: 1, Model: "m"})
	require.NoError(t, err, "a request already admitted still settles")
	require.ErrorContains(t, db.Ping(ctx), "sqlite: ping: the database cannot be written")

	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA query_only = 0"))
	require.NoError(t, db.Ping(ctx), "the ping writes what waits, and the DB is ready again")
	require.Zero(t, ks.PendingUsage())
	require.NoError(t, ks.Reserve(ctx, "key_1", 10))
	rows, err := ks.Usage(ctx, auth.UsageParams{KeyID: "key_1", GroupBy: auth.GroupByKey})
	require.NoError(t, err)
	require.Equal(t, []auth.UsageRow{{KeyID: "key_1", Requests: 4, InputTokens: 30}}, rows, "every Settle, written once")
	for len(logs.lines()) < 2 { // the writer's next commit goes through
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, []string{
		"ERROR sqlite: the usage writer cannot write to the database; it keeps the usage and tries again",
		"INFO sqlite: the usage writer writes to the database again",
	}, logs.lines())
}

// TestPingFailsWhileWritesFail: a DB whose file cannot be written still
// answers queries, but is not ready until a write succeeds; a readiness
// check tries one.
func TestPingFailsWhileWritesFail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	require.NoError(t, db.Ping(ctx))
	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA query_only = 1")) // a file system gone read-only
	require.Error(t, db.Responses().Put(ctx, &responses.StoredResponse{Owner: "o", Response: responses.Response{ID: "resp_1"}}))

	for _, p := range []interface{ Ping(context.Context) error }{db, db.Keys(), db.Responses(), db.Tasks(), db.Contents()} {
		require.ErrorContains(t, p.Ping(ctx), "sqlite: ping: the database cannot be written")
	}
	_, err := db.Responses().Get(ctx, "o", "resp_1")
	require.ErrorIs(t, err, responses.ErrNotFound, "reads work")

	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA query_only = 0"))
	require.NoError(t, db.Ping(ctx), "its write went through")
	require.NoError(t, db.Ping(ctx))
}

// TestWriteFaultTellsTheFilesFailuresFromTheStatements: only the errors
// of a file that cannot be written make a DB unready.
func TestWriteFaultTellsTheFilesFailuresFromTheStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := open(t)
	instructions := strings.Repeat("x", 1<<20) // a megabyte: new pages
	big := &responses.StoredResponse{Owner: "o", Response: responses.Response{ID: "resp_1", Instructions: &instructions}}

	require.NoError(t, sqlite.FillDisk(db))
	full := db.Responses().Put(ctx, big)
	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA max_page_count = 1073741823"))
	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA query_only = 1"))
	readOnly := db.Responses().Put(ctx, big)
	require.NoError(t, sqlite.ExecWriter(db, "PRAGMA query_only = 0"))
	constraint := sqlite.ExecWriter(db, "INSERT INTO health_probe (id, at) VALUES (2, 0)")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	gone := db.Responses().Put(cancelled, big)

	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"FullDisk", full, true},
		{"ReadOnlyFile", readOnly, true},
		{"Constraint", constraint, false},
		{"ContextEnded", gone, false},
	}
	for _, tc := range tests {
		require.Error(t, tc.err, tc.name)
		require.Equal(t, tc.want, sqlite.WriteFault(tc.err), "%s: %v", tc.name, tc.err)
	}
}
