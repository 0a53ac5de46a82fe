package postgres_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/conversations/conversationstest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
	"github.com/gatewaykit/gatewaykit/store/postgres"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// testPool returns a pool on a database of t's own, shared by its
// subtests, each of which works in a schema of its own (newDB).
func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// newDB returns a DB in a fresh schema of pool's database, closed when
// t ends.
func newDB(t testing.TB, pool *pgxpool.Pool, opts *postgres.Options) *postgres.DB {
	t.Helper()
	o := postgres.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = "s_" + strings.ToLower(rand.Text())
	}
	db, err := postgres.New(context.Background(), pool, &o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

func TestKeyStore(t *testing.T) {
	pool := testPool(t)
	authtest.TestKeyStore(t, func(t *testing.T, seeds []authtest.Seed) auth.KeyStore {
		db := newDB(t, pool, nil)
		for _, sd := range seeds {
			require.NoError(t, db.Keys().Add(context.Background(), sd.Secret, sd.Key))
		}
		return db.Keys()
	})
}

func TestKeyPutter(t *testing.T) {
	pool := testPool(t)
	authtest.TestKeyPutter(t, func(t *testing.T) authtest.PutStore { return newDB(t, pool, nil).Keys() })
}

func TestIDLookup(t *testing.T) {
	pool := testPool(t)
	authtest.TestIDLookup(t, func(t *testing.T) authtest.IDStore { return newDB(t, pool, nil).Keys() })
}

func TestKeyAdmin(t *testing.T) {
	pool := testPool(t)
	authtest.TestKeyAdmin(t, func(t *testing.T) authtest.AdminStore { return newDB(t, pool, nil).Keys() })
}

func TestUsageReader(t *testing.T) {
	pool := testPool(t)
	authtest.TestUsageReader(t, func(t *testing.T) authtest.UsageStore { return newDB(t, pool, nil).Keys() })
}

func TestResponseStore(t *testing.T) {
	pool := testPool(t)
	responsestest.TestStore(t, func(t *testing.T) responses.Store { return newDB(t, pool, nil).Responses() })
}

func TestRunStore(t *testing.T) {
	pool := testPool(t)
	responsestest.TestRunStore(t, func(t *testing.T) responses.RunStore { return newDB(t, pool, nil).Runs() })
}

func TestConversationStore(t *testing.T) {
	pool := testPool(t)
	conversationstest.TestStore(t, func(t *testing.T) conversations.Store { return newDB(t, pool, nil).Conversations() })
}

func TestTaskStore(t *testing.T) {
	pool := testPool(t)
	videostest.TestTaskStore(t, func(t *testing.T) videos.TaskStore { return newDB(t, pool, nil).Tasks() })
}

func TestContentStore(t *testing.T) {
	pool := testPool(t)
	videostest.TestContentStore(t, func(t *testing.T) videos.ContentStore {
		return newDB(t, pool, &postgres.Options{ChunkSize: 1024}).Contents()
	})
}
