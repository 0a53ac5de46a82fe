package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/postgres"
	"github.com/gatewaykit/gatewaykit/store/redis"
	"github.com/gatewaykit/gatewaykit/videos"
)

// sharedState holds the stores of -db postgres://… and -redis redis://…;
// nil fields leave the gateway's in-memory defaults.
type sharedState struct {
	keys      auth.KeyStore
	responses responses.Store
	tasks     videos.TaskStore
	contents  videos.ContentStore
	limiter   auth.Limiter
	// videoLease is the lease of a claimed video task (-video-lease);
	// 0 means the runner's default.
	videoLease time.Duration
	banner     []string // where the state lives, for the banner
	closers    []func() error
}

// close closes what the state opened, last first.
func (s *sharedState) close() error {
	var errs []error
	for i := len(s.closers) - 1; i >= 0; i-- {
		errs = append(errs, s.closers[i]())
	}
	return errors.Join(errs...)
}

// isPostgresDSN reports whether the -db value names a PostgreSQL
// database.
func isPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// openPostgres opens the PostgreSQL stores of -db into s, and puts the
// keys of the configuration file into the database (secret hashes only;
// their usage stays what the database holds).
func openPostgres(ctx context.Context, s *sharedState, dsn string, keys []gateway.KeyConfig, logger *slog.Logger) error {
	db, err := postgres.Open(ctx, dsn, &postgres.Options{Logger: logger})
	if err != nil {
		return fmt.Errorf("-db: %w", err)
	}
	s.closers = append(s.closers, db.Close)
	if err := gateway.PutKeys(ctx, db.Keys(), keys); err != nil {
		return err
	}
	s.keys, s.responses, s.tasks, s.contents = db.Keys(), db.Responses(), db.Tasks(), db.Contents()
	s.banner = append(s.banner, "state: PostgreSQL (keys and usage, stored responses, video tasks and content), shared by every replica on this database")
	return nil
}

// openRedis opens the rate limiter of -redis into s.
func openRedis(ctx context.Context, s *sharedState, url, prefix string) error {
	opt, err := goredis.ParseURL(url)
	if err != nil {
		return fmt.Errorf("-redis: want redis://host:port/db: %w", err)
	}
	c := goredis.NewClient(opt)
	s.closers = append(s.closers, c.Close)
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("-redis: %w", err)
	}
	s.limiter = redis.NewLimiter(c, &redis.Options{Prefix: prefix})
	s.banner = append(s.banner, "rate limits: Redis, shared by every replica on this server")
	return nil
}
