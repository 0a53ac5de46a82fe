package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/examples/internal/observability"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
	"github.com/gatewaykit/gatewaykit/videos"
)

// defaultDB is the -db of a server started without one: a SQLite file in
// the working directory.
const defaultDB = "sqlite:gatewaykit.db"

// stores are the state of the server: what -db chose.
type stores struct {
	// putter receives the keys of the configuration at start
	// (gateway.PutKeys); keys serves them to the gateway, possibly
	// through a cache.
	putter        auth.KeyPutter
	keys          auth.KeyStore
	responses     responses.Store
	conversations conversations.Store
	runs          responses.RunStore // the background responses; nil means in memory
	tasks         videos.TaskStore
	contents      videos.ContentStore
	// where says where the state lives and what survives a restart, for
	// the banner.
	where string
	// close releases the stores once the gateway has stopped.
	close func() error
	// limiter enforces the rate limits (-redis); nil means one in memory.
	limiter auth.Limiter
	// limiterFailure is what the auth middleware does while limiter
	// fails (-redis-fail).
	limiterFailure auth.LimiterFailure
	// sessions are the admin console's sessions of -admin-key, which the
	// video content route accepts; nil without an admin key.
	sessions *admin.Sessions
	// videoLease is the lease of a claimed video task (-video-lease); 0
	// means the runner's default.
	videoLease time.Duration
	// runLease is the lease of a claimed background response
	// (-background-lease); 0 means the default.
	runLease time.Duration
	// observe is the server's metrics and traces; nil observes nothing
	// (the tests that need none).
	observe *observability.Observability
}

// openStores opens the stores that the -db flag names:
//
//	sqlite:PATH   one SQLite file (the default, sqlite:gatewaykit.db)
//	memory        in memory: everything is lost at exit
//	postgres://…  a PostgreSQL database, shared by replicas
//
// Each kind of database is one case here and a function of its own. The
// stores log their background failures (a usage writer that cannot
// write) to logger.
func openStores(ctx context.Context, dsn string, logger *slog.Logger) (*stores, error) {
	switch {
	case dsn == "memory":
		return newMemoryStores(), nil
	case strings.HasPrefix(dsn, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"), logger)
	case isPostgresDSN(dsn):
		return openPostgres(ctx, dsn, logger)
	}
	return nil, fmt.Errorf("-db %q: want sqlite:PATH (a SQLite file, the default is %s), memory or postgres://…", dsn, defaultDB)
}

// newMemoryStores returns in-memory stores: what the server had before it
// had -db.
func newMemoryStores() *stores {
	keys := auth.NewMemoryKeyStore()
	return &stores{
		putter:        keys,
		keys:          keys,
		responses:     responses.NewMemoryStore(nil),
		conversations: conversations.NewMemoryStore(nil),
		tasks:         videos.NewMemoryStore(nil),
		contents:      videos.NewMemoryContentStore(nil),
		where:         "in memory (keys' usage, responses, conversations and video tasks are lost at exit)",
		close:         func() error { return nil },
	}
}

// openSQLite opens the SQLite file at path. Keys are served from memory
// for auth.DefaultKeyCacheTTL: a key changed in the file is seen within
// it.
func openSQLite(ctx context.Context, path string, logger *slog.Logger) (*stores, error) {
	if path == "" {
		return nil, fmt.Errorf("-db sqlite: needs a path, such as %s", defaultDB)
	}
	db, err := sqlite.Open(ctx, path, &sqlite.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("-db sqlite:%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return &stores{
		putter:        db.Keys(),
		keys:          auth.NewCachedKeyStore(db.Keys(), auth.DefaultKeyCacheTTL),
		responses:     db.Responses(),
		conversations: db.Conversations(),
		runs:          db.Runs(),
		tasks:         db.Tasks(),
		contents:      db.Contents(),
		where:         "SQLite file " + abs + " (keys' usage, responses, background responses, conversations, video tasks and videos survive a restart)",
		close:         db.Close,
	}, nil
}
