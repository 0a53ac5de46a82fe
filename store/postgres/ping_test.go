package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPing: the DB and its stores answer a readiness check while the
// database does.
func TestPing(t *testing.T) {
	ctx := context.Background()
	pool := testPool(t)
	db := newDB(t, pool, nil)
	pingers := []interface{ Ping(context.Context) error }{db, db.Keys(), db.Responses(), db.Tasks(), db.Contents()}
	for _, p := range pingers {
		require.NoError(t, p.Ping(ctx))
	}
}
