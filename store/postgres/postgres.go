package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// Defaults of [Options].
const (
	// DefaultSchema is the schema that holds the tables.
	DefaultSchema = "public"
	// DefaultReservationTTL is how long the quota reservations of a
	// gateway instance count after its last heartbeat.
	DefaultReservationTTL = 30 * time.Second
	// DefaultChunkSize is the size of the chunks that video content is
	// stored in: 1 MiB.
	DefaultChunkSize = 1 << 20
	// DefaultMaxConns is the size of the connection pool that Open makes
	// when the connection string has no pool_max_conns.
	DefaultMaxConns = 16
)

// Options are the settings of a [DB]. A nil *Options means the defaults.
type Options struct {
	// Schema is the PostgreSQL schema of the tables, created if missing;
	// "" means DefaultSchema. Several gateways (or tests) can share one
	// database with a schema each.
	Schema string
	// Instance names this gateway process among those sharing the
	// database, for its quota reservations; "" means the host name, the
	// process id and random characters. Two live processes must not
	// share a name.
	Instance string
	// ReservationTTL is how long this instance's quota reservations
	// count without a heartbeat; 0 means DefaultReservationTTL. The DB
	// renews them every third of it, so a process that dies with
	// requests in flight blocks their quota for at most this long.
	ReservationTTL time.Duration
	// ChunkSize is the size of the chunks of video content, in bytes; 0
	// means DefaultChunkSize.
	ChunkSize int
	// Logger receives the heartbeat's failures, and those of the
	// settlements written behind (see [KeyStore]); nil discards them.
	Logger *slog.Logger

	// For tests: the bound of the queue of Settles (0: 4096), how long
	// a key's quota from its last commit answers its next Settle (0:
	// 1 s), and how long Close retries the queue (0: 10 s).
	queueSize     int
	projectionTTL time.Duration
	closeTimeout  time.Duration
}

// DB is gatewaykit's state in one PostgreSQL database: API keys and
// their quota ([DB.Keys]), stored responses ([DB.Responses]), video tasks
// ([DB.Tasks]) and video content ([DB.Contents]). It is safe for
// concurrent use, and any number of gateway processes may share the
// database. Close it when done.
type DB struct {
	pool       *pgxpool.Pool
	ownPool    bool
	schema     string // quoted identifier
	schemaName string
	instance   string
	ttl        time.Duration
	chunk      int
	log        *slog.Logger

	keys     *KeyStore
	resps    *ResponseStore
	convs    *ConversationStore
	tasks    *TaskStore
	runs     *RunStore
	contents *ContentStore
	batcher  *quotaBatcher

	// writes records the last write of the quota writer or the
	// heartbeat that failed for a reason of the server's (writeFault),
	// until one succeeds.
	writes sqlstore.WriteHealth

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// Open connects to the database at dsn (a postgres:// URL or a key=value
// string; pgxpool settings such as pool_max_conns are accepted, and the
// pool holds DefaultMaxConns connections without it), creates
// or migrates its schema ([Migrate]) and returns the stores. If opts is
// nil, the default options are used.
//
// A database that does not exist yet (the server answers SQLSTATE
// 3D000) is created: Open connects as the same user to the server's
// maintenance database, postgres, and runs CREATE DATABASE, which needs
// the CREATEDB privilege (the error says so when the user lacks it).
// Replicas that start together create it once. [New], over a pool of the
// caller's, creates nothing.
func Open(ctx context.Context, dsn string, opts *Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parsing the connection string: %w", redact(err))
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connecting: %w", err)
	}
	db, err := New(ctx, pool, opts)
	if isMissingDatabase(err) {
		if err = createDatabase(ctx, cfg.ConnConfig); err == nil {
			db, err = New(ctx, pool, opts)
		}
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	db.ownPool = true
	return db, nil
}

// isMissingDatabase reports whether err is the server's refusal of a
// connection to a database that does not exist.
func isMissingDatabase(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "3D000" // invalid_catalog_name
}

// createDatabase creates the database that cc names, connected as the
// same user to the server's maintenance database, postgres. A database
// created meanwhile by another process (a replica starting at the same
// time) is not an error.
func createDatabase(ctx context.Context, cc *pgx.ConnConfig) error {
	name := cc.Database
	fail := func(err error) error {
		return fmt.Errorf("postgres: the database %q does not exist, and creating it failed: %w; create it (createdb %s), or connect as a user with the CREATEDB privilege",
			name, err, name)
	}
	mc := cc.Copy()
	mc.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, mc)
	if err != nil {
		return fail(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P04" || pgErr.Code == "23505") {
		// 42P04 duplicate_database; 23505 when two CREATE DATABASE of
		// the same name race in pg_database's unique index.
		return nil
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// New is [Open] over a pool that the caller owns: Close leaves it open.
// A call whose connection was lost resets the pool (pgxpool.Pool.Reset:
// see "Lost connections" in the package documentation), which drops the
// caller's idle connections of it too.
func New(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*DB, error) {
	if pool == nil {
		return nil, errors.New("postgres: New: nil pool")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.ReservationTTL == 0 {
		o.ReservationTTL = DefaultReservationTTL
	}
	if o.ReservationTTL < time.Second {
		return nil, fmt.Errorf("postgres: ReservationTTL %v is below one second", o.ReservationTTL)
	}
	if o.ChunkSize == 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.ChunkSize < 1024 || o.ChunkSize > 64<<20 {
		return nil, fmt.Errorf("postgres: ChunkSize %d is outside 1 KiB–64 MiB", o.ChunkSize)
	}
	if o.Instance == "" {
		host, _ := os.Hostname()
		o.Instance = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), rand.Text()[:8])
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	err := Migrate(ctx, pool, o.Schema)
	if err != nil && lostConn(err) && ctx.Err() == nil {
		// A connection of the pool was broken (the server restarted):
		// the migrations are applied in transactions, and again from
		// where they stopped.
		pool.Reset()
		err = Migrate(ctx, pool, o.Schema)
	}
	if err != nil {
		return nil, err
	}
	db := &DB{
		pool:       pool,
		schema:     pgx.Identifier{o.Schema}.Sanitize(),
		schemaName: o.Schema,
		instance:   o.Instance,
		ttl:        o.ReservationTTL,
		chunk:      o.ChunkSize,
		log:        o.Logger,
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	if err := db.heartbeat(ctx); err != nil {
		return nil, fmt.Errorf("postgres: registering instance %q: %w", o.Instance, err)
	}
	db.batcher = newQuotaBatcher(db, o.queueSize, o.projectionTTL, o.closeTimeout)
	db.keys = &KeyStore{db: db}
	db.resps = &ResponseStore{db: db}
	db.convs = &ConversationStore{db: db}
	db.tasks = &TaskStore{db: db}
	db.runs = &RunStore{db: db}
	db.contents = &ContentStore{db: db}
	go db.beat()
	return db, nil
}

// q qualifies the table and function names (gk_…) of query with the
// DB's schema.
func (db *DB) q(query string) string {
	return strings.ReplaceAll(query, "gk_", db.schema+".gk_")
}

// heartbeat renews this instance's row, so that its reservations keep
// counting, and forgets instances that have been gone for an hour,
// with their reservations.
func (db *DB) heartbeat(ctx context.Context) (err error) {
	defer func() { db.writes.Note(err, writeFault) }()
	return db.retry(ctx, func() error {
		_, err := db.pool.Exec(ctx, db.q(`
			INSERT INTO gk_instances (id, expires_at) VALUES ($1, clock_timestamp() + $2 * interval '1 microsecond')
			ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`),
			db.instance, db.ttl.Microseconds())
		if err != nil {
			return err
		}
		_, err = db.pool.Exec(ctx, db.q(`
			WITH gone AS (DELETE FROM gk_instances WHERE expires_at < clock_timestamp() - interval '1 hour' RETURNING id)
			DELETE FROM gk_reservations WHERE instance IN (SELECT id FROM gone)`))
		return err
	})
}

func (db *DB) beat() {
	defer close(db.done)
	tick := time.NewTicker(db.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-tick.C:
			ctx, cancel := context.WithTimeout(context.Background(), db.ttl/3)
			if err := db.heartbeat(ctx); err != nil {
				db.log.LogAttrs(ctx, slog.LevelError, "postgres: heartbeat failed; this instance's quota reservations stop counting when its TTL runs out",
					slog.String("instance", db.instance), slog.Any("error", err))
			}
			cancel()
		}
	}
}

// Instance returns the name of this gateway instance ([Options.Instance]).
func (db *DB) Instance() string { return db.instance }

// Pool returns the connection pool.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Keys returns the API key store.
func (db *DB) Keys() *KeyStore { return db.keys }

// Responses returns the store of responses.
func (db *DB) Responses() *ResponseStore { return db.resps }

// Conversations returns the conversation store of the database.
func (db *DB) Conversations() *ConversationStore { return db.convs }

// Runs returns the store of background responses.
func (db *DB) Runs() *RunStore { return db.runs }

// Tasks returns the store of video tasks.
func (db *DB) Tasks() *TaskStore { return db.tasks }

// Contents returns the store of video content.
func (db *DB) Contents() *ContentStore { return db.contents }

// Close stops the heartbeat, commits the settlements still queued (see
// [KeyStore]; it retries for up to 10 s while the database cannot be
// reached, and returns an error if some could not be written), releases
// this instance's quota reservations (its requests are over), and closes
// the pool if [Open] made it. Call it once the gateway has stopped
// serving. Calls after the first do nothing.
func (db *DB) Close() error {
	var err error
	db.closeOnce.Do(func() {
		close(db.stop)
		<-db.done
		flushErr := db.batcher.close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = db.retry(ctx, func() error {
			_, err := db.pool.Exec(ctx, db.q(`
				WITH gone AS (DELETE FROM gk_instances WHERE id = $1 RETURNING id)
				DELETE FROM gk_reservations WHERE instance = $1`), db.instance)
			return err
		})
		err = errors.Join(flushErr, err)
		if db.ownPool {
			db.pool.Close()
		}
	})
	return err
}

// redact drops the text of a connection-string parse error, which may
// quote the password.
func redact(err error) error {
	if strings.Contains(err.Error(), "password") || strings.Contains(err.Error(), "@") {
		return errors.New("malformed connection string")
	}
	return err
}

// Schema returns the quoted name of the DB's schema, for queries of the
// embedder's own.
func (db *DB) Schema() string { return db.schema }
