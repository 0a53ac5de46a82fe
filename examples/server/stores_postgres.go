package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/postgres"
	"github.com/gatewaykit/gatewaykit/store/redis"
)

// isPostgresDSN reports whether the -db value names a PostgreSQL
// database.
func isPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openPostgres opens the PostgreSQL database of -db. Keys are served from
// memory for auth.DefaultKeyCacheTTL: a key changed by another replica is
// seen within it.
func openPostgres(ctx context.Context, dsn string, logger *slog.Logger) (*stores, error) {
	db, err := postgres.Open(ctx, dsn, &postgres.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("-db: %w", err)
	}
	return &stores{
		putter:        db.Keys(),
		keys:          auth.NewCachedKeyStore(db.Keys(), auth.DefaultKeyCacheTTL),
		responses:     db.Responses(),
		conversations: db.Conversations(),
		runs:          db.Runs(),
		tasks:         db.Tasks(),
		contents:      db.Contents(),
		where: "PostgreSQL (keys' usage, responses, conversations, video tasks and videos survive a restart, " +
			"and every replica on this database shares them)",
		close: db.Close,
	}, nil
}

// openRedis puts the rate limiter of -redis into st: limits in Redis,
// shared by every replica on the server.
func openRedis(ctx context.Context, st *stores, url, prefix string) error {
	opt, err := goredis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("-redis: want redis://host:port/db: %w", err)
	}
	c := goredis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return fmt.Errorf("-redis: %w", err)
	}
	closeStores := st.close
	st.close = func() error { return errors.Join(closeStores(), c.Close()) }
	st.limiter = redis.NewLimiter(c, &redis.Options{Prefix: prefix})
	st.where += "; rate limits in Redis, shared by every replica on that server"
	return nil
}
