package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Lost connections. A PostgreSQL server that restarts (or fails over, or
// whose operator terminates backends) breaks every connection of the
// pool at once; the next call on each fails, although the server may
// answer a new connection a moment later. Each operation of this package
// that may run twice is tried once more, on a new connection, when its
// connection was lost (lostConn); doc.go says which may, and why.

// lostConn reports whether err says that the connection to the server was
// lost or could not be made: the server terminated it (SQLSTATE 57P01
// admin_shutdown, 57P02 crash_shutdown, 57P05 idle_session_timeout), is
// starting up (57P03 cannot_connect_now), or reported a connection
// exception (class 08); connecting failed (refused, or any other
// pgconn.ConnectError); the socket was reset or closed. Errors of
// statements, and timeouts, are not lost connections.
func lostConn(err error) bool {
	if err == nil {
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "57P05":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	for _, target := range []error{pgconn.ErrConnClosed, io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// again reports whether a call that failed with err should run once more
// on a new connection (and makes sure it gets one): its connection was
// lost and ctx still runs.
func (db *DB) again(ctx context.Context, err error) bool {
	if ctx.Err() != nil || !lostConn(err) {
		return false
	}
	db.reset()
	return true
}

// reset drops every connection of the pool (pgxpool.Pool.Reset: the idle
// ones at once, those in use when they are released), so that the calls
// that follow dial new ones instead of finding the other broken ones a
// failure at a time.
func (db *DB) reset() { db.pool.Reset() }

// retry runs op, and once more on a new connection if its connection was
// lost. Only for operations that may run twice: reads, and writes that
// leave the same state when repeated.
func (db *DB) retry(ctx context.Context, op func() error) error {
	err := op()
	if err != nil && db.again(ctx, err) {
		err = op()
	}
	return err
}

// inTx runs fn in a transaction and commits it. committing reports that
// err came from the COMMIT itself after it was sent: the transaction may
// have committed or not. Before the COMMIT is sent, a transaction whose
// connection is lost is rolled back by the server.
func (db *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) (committing bool, err error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if err := fn(tx); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return !pgconn.SafeToRetry(err), err
	}
	return false, nil
}

// tx runs fn in a transaction ([DB.inTx]) and, if its connection was
// lost, runs it again in a new one: always if repeatable (fn leaves the
// same state when it runs twice), and otherwise only when the first
// transaction certainly did not commit (it failed before its COMMIT was
// sent). fn must start from scratch each time it is called.
func (db *DB) tx(ctx context.Context, repeatable bool, fn func(pgx.Tx) error) error {
	committing, err := db.inTx(ctx, fn)
	if err == nil || (committing && !repeatable) || !db.again(ctx, err) {
		return err
	}
	_, err = db.inTx(ctx, fn)
	return err
}
