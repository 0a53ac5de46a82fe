package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
)

func TestPinger(t *testing.T) {
	stores := []struct {
		name string
		of   func(db *sqlite.DB) gateway.Pinger
	}{
		{"DB", func(db *sqlite.DB) gateway.Pinger { return db }},
		{"KeyStore", func(db *sqlite.DB) gateway.Pinger { return db.Keys() }},
		{"CachedKeyStore", func(db *sqlite.DB) gateway.Pinger { return auth.NewCachedKeyStore(db.Keys(), auth.DefaultKeyCacheTTL) }},
		{"ResponseStore", func(db *sqlite.DB) gateway.Pinger { return db.Responses() }},
		{"TaskStore", func(db *sqlite.DB) gateway.Pinger { return db.Tasks() }},
		{"ContentStore", func(db *sqlite.DB) gateway.Pinger { return db.Contents() }},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			gatewaytest.TestPinger(t, func(t *testing.T) gateway.Pinger { return s.of(open(t)) })
		})
	}
}

// TestPingFailsOnceClosed: a closed DB fails a readiness check.
func TestPingFailsOnceClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "gateway.db"), nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.ErrorContains(t, db.Ping(ctx), "sqlite: ping")
	require.ErrorContains(t, db.Keys().Ping(ctx), "sqlite: ping")
}
