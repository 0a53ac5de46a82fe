package postgres

import (
	"context"
	"fmt"
)

// Ping reports whether the database answers: it pings a connection of
// the pool, within ctx. A gateway's readiness check asks it (package
// gateway's Pinger); each store of the DB has the same method.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.retry(ctx, func() error { return db.pool.Ping(ctx) }); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *KeyStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *ResponseStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *TaskStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *ContentStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }
