package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure Go driver, registered as "sqlite"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// ErrInUse is returned, wrapped, by [Open] for a database file that
// another DB holds open, in this process or another.
var ErrInUse = errors.New("sqlite: the database file is in use by another gateway process")

// Defaults of [Options].
const (
	// DefaultBusyTimeout is how long a statement waits for a lock held by
	// another connection (another process on the same file) before it
	// fails with SQLITE_BUSY.
	DefaultBusyTimeout = 5 * time.Second
	// DefaultCommitDelay is how long the usage of a Settle waits in
	// memory for others to join its group commit.
	DefaultCommitDelay = time.Millisecond
	// DefaultMaxPendingUsage is how many usage rows may wait in memory
	// to be written before new requests are refused.
	DefaultMaxPendingUsage = 100_000
)

// Options configure [Open]. The zero value (and a nil *Options) means the
// defaults.
type Options struct {
	// BusyTimeout is how long a statement waits for a lock held by
	// another connection; 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// MaxReaders is the number of connections that read at once; 0 means
	// max(4, GOMAXPROCS).
	MaxReaders int
	// CommitDelay is how long the usage of a Settle may wait in memory
	// for others to join its group commit (see [KeyStore]). 0 means
	// DefaultCommitDelay; a negative value, no wait (a commit starts as
	// soon as the previous one ends).
	CommitDelay time.Duration
	// MaxPendingUsage bounds the usage rows (one per Settle with a
	// model, about 100 bytes each) that wait in memory while the file
	// cannot be written: from this many on, Reserve refuses new requests
	// ([ErrBacklog]); the Settles of the requests already admitted are
	// still kept. 0 means DefaultMaxPendingUsage.
	MaxPendingUsage int
	// Logger receives the failures of the usage writer (once a minute
	// while they last); nil discards them.
	Logger *slog.Logger
}

// DB is one SQLite database file holding every store of a gateway: API
// keys ([DB.Keys]), stored responses ([DB.Responses]), video tasks
// ([DB.Tasks]) and their content ([DB.Contents]). Create it with [Open]
// and close it with [DB.Close] once the gateway has stopped.
//
// A DB is safe for concurrent use. It writes through one connection
// (SQLite has one writer at a time: queueing the writers in Go rather
// than in SQLite's busy handler keeps them fair and never fails them with
// SQLITE_BUSY) and reads through a pool of read-only connections, which
// in WAL mode never wait for the writer.
type DB struct {
	path   string
	unlock func() error // releases the file's lock
	writer *sql.DB      // one connection, BEGIN IMMEDIATE
	reader *sql.DB      // MaxReaders query_only connections
	usage  usageState
	// writes records the last write that failed for a reason of the
	// file's (writeFault), until a write succeeds.
	writes sqlstore.WriteHealth

	// quotaStmts are the statements of the group commits, prepared once
	// on the writer's connection: used only while holding it.
	quotaStmts *quotaStmts
}

// Open opens, or creates, the SQLite database at path (and the folders
// of path that do not exist, with mode 0750), brings its schema
// up to date with the embedded migrations, and readies it for the gateway
// process that opens it:
//
//   - every key's Reserved is recomputed as the reservations of the
//     video tasks still queued or running and of the background
//     responses not yet done, which a task or a run keeps until its
//     runner settles it: a reservation of a request that was in flight
//     when a previous process died (kill -9) would otherwise be held
//     forever, since no one is left to settle it;
//   - every running task's lease is ended (and every background
//     response's, see [RunStore]), so that the new process's
//     runner claims it again at once (the attempt counts against the
//     runner's MaxAttempts, so a task that crashes the gateway is failed
//     rather than retried forever).
//
// Both steps assume that one gateway process uses the file at a time,
// which is what an embedded database is for (several replicas share a
// PostgreSQL database instead), and Open makes sure of it: it holds an
// advisory lock on PATH.lock until Close (or the process's end), and
// fails with an error wrapping [ErrInUse] while another DB holds it, in
// this process or another. Open refuses an empty path and ":memory:"
// (each connection would get a database of its own).
//
// The database is in WAL mode with synchronous=NORMAL: a committed write
// survives the crash of the process (kill -9); a power loss may lose the
// last transactions, never corrupt the file.
func Open(ctx context.Context, path string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case path == "":
		return nil, errors.New("sqlite: Open: empty path")
	case path == ":memory:" || strings.HasPrefix(path, "file:") || strings.ContainsAny(path, "?#"):
		return nil, fmt.Errorf("sqlite: Open: %q: want the path of a database file (no \":memory:\", \"file:\" URI, '?' or '#')", path)
	case o.BusyTimeout < 0 || o.MaxReaders < 0 || o.MaxPendingUsage < 0:
		return nil, errors.New("sqlite: Open: negative Options")
	}
	if o.MaxPendingUsage == 0 {
		o.MaxPendingUsage = DefaultMaxPendingUsage
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.CommitDelay == 0 {
		o.CommitDelay = DefaultCommitDelay
	}
	if o.MaxReaders == 0 {
		o.MaxReaders = max(4, runtime.GOMAXPROCS(0))
	}
	if dir := filepath.Dir(path); dir != "" {
		// As the database file itself, its folders are created when
		// missing (sqlite:/var/lib/gatewaykit/state.db on a new machine).
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("sqlite: Open %s: creating the folder %s: %w", path, dir, err)
		}
	}
	unlock, err := lockFile(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: Open %s: %w", path, err)
	}
	pragmas := url.Values{"_pragma": {
		fmt.Sprintf("busy_timeout(%d)", o.BusyTimeout.Milliseconds()),
		"journal_mode(WAL)",
		"synchronous(NORMAL)",
	}}
	wq := url.Values{"_pragma": pragmas["_pragma"], "_txlock": {"immediate"}}
	writer, err := sql.Open("sqlite", path+"?"+wq.Encode())
	if err != nil {
		unlock()
		return nil, fmt.Errorf("sqlite: Open %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxIdleTime(0)
	writer.SetConnMaxLifetime(0)
	db := &DB{path: path, unlock: unlock, writer: writer}
	db.usage.init(o.CommitDelay, o.MaxPendingUsage, o.Logger)
	if err := db.init(ctx); err != nil {
		writer.Close()
		unlock()
		return nil, fmt.Errorf("sqlite: Open %s: %w", path, err)
	}
	rq := url.Values{"_pragma": append(pragmas["_pragma"], "query_only(1)")}
	reader, err := sql.Open("sqlite", path+"?"+rq.Encode())
	if err != nil {
		writer.Close()
		unlock()
		return nil, fmt.Errorf("sqlite: Open %s: %w", path, err)
	}
	reader.SetMaxOpenConns(o.MaxReaders)
	reader.SetMaxIdleConns(o.MaxReaders)
	reader.SetConnMaxLifetime(0)
	reader.SetConnMaxIdleTime(0)
	db.reader = reader
	go db.usage.run(db)
	return db, nil
}

// init migrates the schema and clears what a previous process left.
func (db *DB) init(ctx context.Context) error {
	if err := db.writer.PingContext(ctx); err != nil {
		return err
	}
	if _, err := migrate(ctx, db.writer, migrationFiles); err != nil {
		return err
	}
	return db.recover(ctx, time.Now())
}

// recover recomputes reservations and ends leases, as [Open] documents.
func (db *DB) recover(ctx context.Context, now time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE keys SET reserved = CASE WHEN unlimited THEN 0 ELSE
	CAST(MIN(COALESCE((SELECT TOTAL(charge_amount) FROM tasks
		WHERE charge_key = keys.id AND status IN ('queued', 'in_progress')), 0)
		+ COALESCE((SELECT TOTAL(charge_amount) FROM runs WHERE charge_key = keys.id AND done = 0), 0),
		9223372036854775807) AS INTEGER) END`); err != nil {
			return fmt.Errorf("recomputing reservations: %w", err)
		}
		// The background runs of a previous process: claimable at once.
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET lease_expires_at = ? WHERE done = 0
	AND status IN ('in_progress', 'cancelled') AND lease_expires_at > ?`, now.UnixNano(), now.UnixNano()); err != nil {
			return fmt.Errorf("ending the leases of background runs: %w", err)
		}
		return endLeases(ctx, tx, now)
	})
}

// Path returns the path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database. Call it after the gateway has stopped using
// the stores.
func (db *DB) Close() error {
	errs := []error{db.usage.close(db)}
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	errs = append(errs, db.writer.Close(), db.unlock())
	return errors.Join(errs...)
}

// Keys returns the key store of the database.
func (db *DB) Keys() *KeyStore { return &KeyStore{db: db} }

// Responses returns the response store of the database.
func (db *DB) Responses() *ResponseStore { return &ResponseStore{db: db} }

// Conversations returns the conversation store of the database.
func (db *DB) Conversations() *ConversationStore { return &ConversationStore{db: db} }

// Tasks returns the video task store of the database.
func (db *DB) Tasks() *TaskStore { return &TaskStore{db: db} }

// Contents returns the video content store of the database.
func (db *DB) Contents() *ContentStore { return &ContentStore{db: db} }

// write runs fn in a write transaction (BEGIN IMMEDIATE on the one
// writer connection) and commits it if fn returns nil.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) (err error) {
	defer func() { db.writes.Note(err, writeFault) }()
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// errNoRows reports whether err is sql.ErrNoRows.
func errNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// quotaStmts are the statements of a group commit, prepared on one driver
// connection of the writer.
type quotaStmts struct {
	conn                          any // the driver connection
	begin, update, commit, cancel driver.Stmt
	insertUsage                   driver.Stmt
}

// writeQuotas writes the quotas rows of the keys ids, and the usage rows,
// in one transaction.
// It runs the statements on the writer's connection directly, prepared
// once, rather than through database/sql's Tx, which would parse BEGIN
// and COMMIT again at every commit. ctx should have no Done channel (the
// driver watches one with a goroutine per statement).
func (db *DB) writeQuotas(ctx context.Context, ids []string, rows []auth.Quota, usage []usageRow) error {
	conn, err := db.writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		st, err := db.prepareQuotaStmts(ctx, dc)
		if err != nil {
			return err
		}
		exec := func(s driver.Stmt, args ...driver.NamedValue) error {
			_, err := s.(driver.StmtExecContext).ExecContext(ctx, args)
			return err
		}
		if err := exec(st.begin); err != nil {
			return err
		}
		for i, id := range ids {
			q := &rows[i]
			err := exec(st.update, driver.NamedValue{Ordinal: 1, Value: q.Remaining}, driver.NamedValue{Ordinal: 2, Value: q.Reserved},
				driver.NamedValue{Ordinal: 3, Value: q.Used}, driver.NamedValue{Ordinal: 4, Value: q.CostUSD}, driver.NamedValue{Ordinal: 5, Value: id})
			if err != nil {
				_ = exec(st.cancel)
				return err
			}
		}
		for i := range usage {
			u := &usage[i]
			err := exec(st.insertUsage, driver.NamedValue{Ordinal: 1, Value: u.keyID}, driver.NamedValue{Ordinal: 2, Value: u.model},
				driver.NamedValue{Ordinal: 3, Value: u.at}, driver.NamedValue{Ordinal: 4, Value: u.input},
				driver.NamedValue{Ordinal: 5, Value: u.output}, driver.NamedValue{Ordinal: 6, Value: u.cost},
				driver.NamedValue{Ordinal: 7, Value: u.cached}, driver.NamedValue{Ordinal: 8, Value: u.cacheWrite},
				driver.NamedValue{Ordinal: 9, Value: u.reasoning})
			if err != nil {
				_ = exec(st.cancel)
				return err
			}
		}
		if err := exec(st.commit); err != nil {
			_ = exec(st.cancel) // a COMMIT that failed may leave the transaction open
			return err
		}
		return nil
	})
}

// prepareQuotaStmts returns the statements of writeQuotas on the driver
// connection dc, preparing them the first time (and again if the pool
// has replaced the connection).
func (db *DB) prepareQuotaStmts(ctx context.Context, dc any) (*quotaStmts, error) {
	if st := db.quotaStmts; st != nil && st.conn == dc {
		return st, nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("sqlite: the driver's connection %T cannot prepare statements", dc)
	}
	st := &quotaStmts{conn: dc}
	for _, p := range []struct {
		stmt  *driver.Stmt
		query string
	}{
		{&st.begin, `BEGIN IMMEDIATE`},
		{&st.update, `UPDATE keys SET remaining = ?, reserved = ?, used = ?, cost_usd = ? WHERE id = ?`},
		{&st.insertUsage, `INSERT INTO usage (key_id, model, at, input_tokens, output_tokens, cost_usd, cached_tokens, cache_write_tokens, reasoning_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.commit, `COMMIT`},
		{&st.cancel, `ROLLBACK`},
	} {
		var err error
		if *p.stmt, err = pc.PrepareContext(ctx, p.query); err != nil {
			return nil, err
		}
	}
	db.quotaStmts = st
	return st, nil
}
