package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// Ping reports whether the database answers and can be written: it pings
// a connection of the pool, within ctx, and, if the last write of the
// quota writer or of the heartbeat failed for a reason of the server's
// (see writeFault), writes this instance's heartbeat: Ping fails until a
// write succeeds. A gateway's readiness check asks it (package gateway's
// Pinger); each store of the DB has the same method.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.retry(ctx, func() error { return db.pool.Ping(ctx) }); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	if db.writes.Last() == nil {
		return nil
	}
	if err := db.heartbeat(ctx); err != nil {
		return fmt.Errorf("postgres: ping: the database cannot be written: %w", err)
	}
	return nil
}

// Shared reports that the database is shared by every replica of the
// gateway that uses it: true (package gateway's SharedPinger; a
// readiness check reports it when it does not answer, but stays ready).
func (db *DB) Shared() bool { return true }

// Shared reports that the store's database is shared by the replicas
// ([DB.Shared]).
func (s *KeyStore) Shared() bool { return true }

// Shared reports that the store's database is shared by the replicas
// ([DB.Shared]).
func (s *ResponseStore) Shared() bool { return true }

// Shared reports that the store's database is shared by the replicas
// ([DB.Shared]).
func (s *ConversationStore) Shared() bool { return true }

// Shared reports that the store's database is shared by the replicas
// ([DB.Shared]).
func (s *TaskStore) Shared() bool { return true }

// Shared reports that the store's database is shared by the replicas
// ([DB.Shared]).
func (s *ContentStore) Shared() bool { return true }

// writeFault reports whether err is a failure of the server to write,
// rather than one of the statement: a lost connection (lostConn), scarce
// resources (class 53: a full disk, too many connections), a system
// error (class 58), a server that only reads (25006
// read_only_sql_transaction: a standby after a failover).
func writeFault(err error) bool {
	if lostConn(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch {
	case pgErr.Code == "25006", strings.HasPrefix(pgErr.Code, "53"), strings.HasPrefix(pgErr.Code, "58"):
		return true
	}
	return false
}

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *KeyStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *ResponseStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *ConversationStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *TaskStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }

// Ping reports whether the store's database answers ([DB.Ping]).
func (s *ContentStore) Ping(ctx context.Context) error { return s.db.Ping(ctx) }
