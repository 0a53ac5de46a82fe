package sqlite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

func TestOpenRefusesWhatIsNotADatabaseFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path string
		opts       *sqlite.Options
		want       string
	}{
		{"Empty", "", nil, "sqlite: Open: empty path"},
		{"Memory", ":memory:", nil, `want the path of a database file`},
		{"URI", "file:x.db?mode=ro", nil, `want the path of a database file`},
		{"Query", filepath.Join(dir, "x.db?cache=shared"), nil, `want the path of a database file`},
		{"NegativeOptions", filepath.Join(dir, "x.db"), &sqlite.Options{MaxReaders: -1}, "sqlite: Open: negative Options"},
		{"Directory", dir, nil, "sqlite: Open " + dir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, err := sqlite.Open(context.Background(), tc.path, tc.opts)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, db)
		})
	}
}

// TestOpenCreatesTheFolders: a path in folders that do not exist yet,
// as -db sqlite:/var/lib/gatewaykit/state.db on a fresh machine, is
// created; a folder that cannot be is one clear error naming it.
func TestOpenCreatesTheFolders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "var", "lib", "gatewaykit", "state.db")
	db, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	info, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	require.True(t, info.IsDir())
	require.Zero(t, info.Mode().Perm()&0o007, "no access for others: the file holds the keys' hashes")

	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	db, err = sqlite.Open(ctx, filepath.Join(blocker, "sub", "state.db"), nil)
	require.ErrorContains(t, err, "sqlite: Open "+filepath.Join(blocker, "sub", "state.db")+": creating the folder "+filepath.Join(blocker, "sub")+": ")
	require.Nil(t, db)
}

// TestReopen checks what survives a process that dies with requests in
// flight and a video task running (the restart test of examples/server
// kills a real one).
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)

	seed := authtest.NewSeed(t, auth.Key{ID: "key_limited", Owner: "acme", Quota: auth.LimitedQuota(1000)})
	require.NoError(t, db.Keys().PutKey(ctx, seed.Secret, seed.Key))
	_, err = db.Keys().Settle(ctx, auth.SettleParams{KeyID: seed.Key.ID, Used: 100})
	require.NoError(t, err)
	require.NoError(t, db.Keys().Reserve(ctx, seed.Key.ID, 300)) // a request in flight
	require.NoError(t, db.Keys().Reserve(ctx, seed.Key.ID, 40))  // the video task's below
	require.NoError(t, db.Keys().Reserve(ctx, seed.Key.ID, 25))  // the background run's below

	run := &responses.Run{ID: "resp_bg", Owner: "acme", CreatedAt: time.Now(), Request: []byte(`{"model":"m","input":"hi"}`),
		Response: responses.Response{ID: "resp_bg", Status: responses.StatusQueued}, Charge: &responses.RunCharge{KeyID: seed.Key.ID, Amount: 25}}
	require.NoError(t, db.Runs().CreateRun(ctx, run))
	_, _, err = db.Runs().ClaimRun(ctx, responses.RunClaim{Worker: "dead", Lease: time.Hour})
	require.NoError(t, err)

	running, queued := videostest.NewTask("acme", 0), videostest.NewTask("acme", time.Second)
	queued.Charge = &videos.TaskCharge{KeyID: seed.Key.ID, Amount: 40}
	require.NoError(t, db.Tasks().Create(ctx, running))
	require.NoError(t, db.Tasks().Create(ctx, queued))
	claimed, err := db.Tasks().Claim(ctx, videos.ClaimParams{Worker: "dead", Lease: time.Hour})
	require.NoError(t, err)
	require.Equal(t, running.ID, claimed.ID)
	require.NoError(t, db.Responses().Put(ctx, responsestest.NewStoredResponse("acme", "resp_1", "")))
	require.NoError(t, db.Contents().Put(ctx, videos.PutParams{TaskID: running.ID, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: []byte("mp4")}))
	// Close writes nothing more: what a killed process leaves is this.
	require.NoError(t, db.Close())

	again, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, again.Close()) })

	k, err := again.Keys().Lookup(ctx, seed.Secret)
	require.NoError(t, err)
	require.Equal(t, auth.Quota{Remaining: 900, Reserved: 65, Used: 100}, k.Quota,
		"usage is kept; only the reservations of the unfinished video task and background run are")

	taken, _, err := again.Runs().ClaimRun(ctx, responses.RunClaim{Worker: "new", Lease: time.Hour})
	require.NoError(t, err, "the running background run's lease ended at Open")
	require.Equal(t, "resp_bg", taken.ID)
	require.Equal(t, 2, taken.Attempts, "nobody saw any of it: it runs again")

	resumed, err := again.Tasks().Claim(ctx, videos.ClaimParams{Worker: "new", Lease: time.Hour})
	require.NoError(t, err, "the running task's lease ended at Open")
	require.Equal(t, running.ID, resumed.ID)
	require.Equal(t, 2, resumed.Attempts)
	next, err := again.Tasks().Claim(ctx, videos.ClaimParams{Worker: "new", Lease: time.Hour})
	require.NoError(t, err)
	require.Equal(t, queued.ID, next.ID)

	_, err = again.Responses().Get(ctx, "acme", "resp_1")
	require.NoError(t, err)
	c, err := again.Contents().Open(ctx, running.ID, videos.VariantVideo)
	require.NoError(t, err)
	require.Equal(t, []byte("mp4"), videostest.ReadContent(t, c))
}

func TestOpenRefusesAFileThatAnotherDBHolds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gateway.db")
	db, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err)
	second, err := sqlite.Open(ctx, path, nil)
	require.ErrorIs(t, err, sqlite.ErrInUse)
	require.ErrorContains(t, err, path+".lock is held")
	require.Nil(t, second)
	require.NoError(t, db.Close())
	again, err := sqlite.Open(ctx, path, nil)
	require.NoError(t, err, "once closed, the file opens again")
	require.NoError(t, again.Close())
}

func TestPutKeyOfAStoredIDNeverRefundsItsUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ks := open(t).Keys()
	seed := authtest.NewSeed(t, auth.Key{ID: "key_1", Owner: "acme", Quota: auth.LimitedQuota(100)})
	require.NoError(t, ks.PutKey(ctx, seed.Secret, seed.Key))
	_, err := ks.Settle(ctx, auth.SettleParams{KeyID: "key_1", Used: 70})
	require.NoError(t, err)
	for _, tc := range []struct {
		budget int64
		want   auth.Quota
	}{
		{100, auth.Quota{Remaining: 30, Used: 70}},
		{50, auth.Quota{Remaining: 0, Used: 70}},
		{500, auth.Quota{Remaining: 430, Used: 70}},
	} {
		k := seed.Key
		k.Quota = auth.LimitedQuota(tc.budget)
		require.NoError(t, ks.PutKey(ctx, seed.Secret, k))
		got, err := ks.Lookup(ctx, seed.Secret)
		require.NoError(t, err)
		require.Equal(t, tc.want, got.Quota, "budget %d", tc.budget)
	}
}
