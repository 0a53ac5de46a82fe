package postgres

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one file of migrations/: NNNN_name.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order of version.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("postgres: migration %q is not named NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("postgres: two migrations numbered %d", ms[i].version)
		}
	}
	return ms, nil
}

// SchemaVersion returns the version of the newest embedded migration: the
// version that [Migrate] brings a schema to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// Migrate creates schema if it does not exist and brings it to
// [SchemaVersion], and does nothing if it is there already. [Open] and
// [New] call it.
//
// The runner is small on purpose. The migrations are the files
// migrations/NNNN_name.sql embedded in this package, applied in order of
// NNNN. The table gk_schema_migrations of the schema records the
// versions applied. Each migration runs in a transaction of its own,
// together with the row that records it, so a failed migration leaves
// nothing behind. The whole run holds a PostgreSQL advisory lock derived
// from the schema's name, so gateways that start together wait for each
// other instead of racing: the first migrates, the others find the work
// done. A schema migrated by a newer release (a version this binary does
// not know) is an error, rather than a silent downgrade.
func Migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	if schema == "" {
		schema = DefaultSchema
	}
	ms, err := migrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Release()
	h := fnv.New64a()
	h.Write([]byte("gatewaykit migrations " + schema))
	lock := int64(h.Sum64())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lock); err != nil {
		return fmt.Errorf("postgres: migrate: taking the advisory lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lock)
	}()

	s := pgx.Identifier{schema}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+s); err != nil {
		return fmt.Errorf("postgres: migrate: creating schema %s: %w", s, err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s+`.gk_schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("postgres: migrate: creating the migrations table: %w", err)
	}
	rows, err := conn.Query(ctx, "SELECT version FROM "+s+".gk_schema_migrations")
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	applied, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	newest := 0
	if len(ms) > 0 {
		newest = ms[len(ms)-1].version
	}
	for _, v := range applied {
		if int(v) > newest {
			return fmt.Errorf("postgres: migrate: schema %s is at version %d, newer than this binary's %d: upgrade the gateway", s, v, newest)
		}
	}
	for _, m := range ms {
		if slices.Contains(applied, int32(m.version)) {
			continue
		}
		if err := apply(ctx, conn.Conn(), s, m); err != nil {
			return err
		}
	}
	return nil
}

// apply runs m and records it in one transaction.
func apply(ctx context.Context, conn *pgx.Conn, schema string, m migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migration %04d_%s: %w", m.version, m.name, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+schema); err != nil {
		return fmt.Errorf("postgres: migration %04d_%s: %w", m.version, m.name, err)
	}
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return fmt.Errorf("postgres: migration %04d_%s: %w", m.version, m.name, err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO "+schema+".gk_schema_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
		return fmt.Errorf("postgres: migration %04d_%s: recording it: %w", m.version, m.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migration %04d_%s: %w", m.version, m.name, err)
	}
	return nil
}
