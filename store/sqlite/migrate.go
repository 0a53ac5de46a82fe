package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// A migration is one file of migrations/: NNNN_name.sql, applied once, in
// the order of its version NNNN.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in version order. Their
// versions must be 1, 2, 3, … without gaps: a gap is a build error that
// the tests catch.
func migrations(files fs.FS) ([]migration, error) {
	names, err := fs.Glob(files, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlite: migration %s: the name must be NNNN_name.sql", base)
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("sqlite: migration %s: want version %d (versions run 1, 2, 3… without gaps)", m.name, i+1)
		}
	}
	return ms, nil
}

// migrate brings the schema of db up to date. It is the whole migration
// runner:
//
//   - the table schema_migrations records the version, name and time of
//     every migration applied (it is created if missing: the runner's only
//     CREATE … IF NOT EXISTS);
//   - each migration not yet recorded runs in a transaction of its own,
//     together with the row that records it, so a migration is applied
//     entirely or not at all;
//   - a database that records a version this build does not know (made by
//     a newer gatewaykit) is refused rather than used with a schema the
//     code does not understand.
//
// db must be the writer pool (one connection, BEGIN IMMEDIATE), so that
// two processes opening the same new file do not both migrate it.
func migrate(ctx context.Context, db *sql.DB, files fs.FS) (applied []string, err error) {
	ms, err := migrations(files)
	if err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at TEXT    NOT NULL
) STRICT`); err != nil {
		return nil, fmt.Errorf("sqlite: creating schema_migrations: %w", err)
	}
	for _, m := range ms {
		done, err := applyMigration(ctx, db, m, len(ms))
		if err != nil {
			return applied, err
		}
		if done {
			applied = append(applied, m.name)
		}
	}
	return applied, nil
}

// applyMigration applies m in one transaction unless it is recorded, and
// reports whether it did. latest is the newest version this build knows.
func applyMigration(ctx context.Context, db *sql.DB, m migration, latest int) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return false, err
	}
	if current > latest {
		return false, fmt.Errorf("sqlite: the database's schema is at version %d, newer than this build's %d: use a newer gatewaykit", current, latest)
	}
	if current >= m.version {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, fmt.Errorf("sqlite: migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.version, m.name, time.Now().UTC().Format(time.RFC3339)); err != nil {
		return false, fmt.Errorf("sqlite: recording migration %s: %w", m.name, err)
	}
	return true, tx.Commit()
}
