package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Ping reports whether the database answers and can be written: it runs
// a query on a read connection, within ctx, and, if the last write failed
// for a reason of the file's (a full disk, an I/O error, a file made
// read-only, a lock held by another process for longer than
// [Options].BusyTimeout), a write: the usage that waits to be written, if
// any, else a row of the table health_probe. Ping fails until a write
// succeeds, its own or another's. A gateway's readiness check asks it
// (package gateway's Pinger); each store of the DB has the same method.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("sqlite: ping: %w", err)
	}
	if db.writes.Last() == nil {
		return nil
	}
	var err error
	if db.usage.pending() > 0 {
		err = db.usage.flush(ctx, db)
	} else {
		err = db.write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO health_probe (id, at) VALUES (1, ?)
				ON CONFLICT (id) DO UPDATE SET at = excluded.at`, time.Now().UnixNano())
			return err
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: ping: the database cannot be written: %w", err)
	}
	return nil
}

// writeFault reports whether err is a failure to write the file, rather
// than one of the statement: SQLite's result codes SQLITE_PERM, BUSY,
// LOCKED, NOMEM, READONLY, IOERR, CORRUPT, FULL, CANTOPEN, PROTOCOL and
// NOTADB (and their extended codes).
func writeFault(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_PERM, sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_READONLY,
		sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL,
		sqlite3.SQLITE_NOTADB:
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
