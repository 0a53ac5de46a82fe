package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/store/sqlite"
)

// TestPing: the DB and its stores answer a readiness check while open,
// and fail it once closed.
func TestPing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"), nil)
	require.NoError(t, err)
	pingers := []interface{ Ping(context.Context) error }{db, db.Keys(), db.Responses(), db.Tasks(), db.Contents()}
	for _, p := range pingers {
		require.NoError(t, p.Ping(ctx))
	}
	require.NoError(t, db.Close())
	for _, p := range pingers {
		require.ErrorContains(t, p.Ping(ctx), "sqlite: ping")
	}
}
