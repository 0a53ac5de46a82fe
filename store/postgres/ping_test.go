package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/store/postgres"
)

func TestPinger(t *testing.T) {
	pool := testPool(t)
	stores := []struct {
		name string
		of   func(db *postgres.DB) gateway.Pinger
	}{
		{"DB", func(db *postgres.DB) gateway.Pinger { return db }},
		{"KeyStore", func(db *postgres.DB) gateway.Pinger { return db.Keys() }},
		{"ResponseStore", func(db *postgres.DB) gateway.Pinger { return db.Responses() }},
		{"TaskStore", func(db *postgres.DB) gateway.Pinger { return db.Tasks() }},
		{"ContentStore", func(db *postgres.DB) gateway.Pinger { return db.Contents() }},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			gatewaytest.TestPinger(t, func(t *testing.T) gateway.Pinger { return s.of(newDB(t, pool, nil)) })
			t.Run("IsSharedByTheReplicas", func(t *testing.T) {
				sp, ok := s.of(newDB(t, pool, nil)).(gateway.SharedPinger)
				require.True(t, ok)
				require.True(t, sp.Shared(), "readiness must not drain every replica when the database is down")
			})
		})
	}
	t.Run("CachedKeyStoreIsShared", func(t *testing.T) {
		keys := auth.NewCachedKeyStore(newDB(t, pool, nil).Keys(), auth.DefaultKeyCacheTTL)
		require.True(t, keys.Shared())
	})
}
