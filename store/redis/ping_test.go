package redis_test

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/store/redis"
	"github.com/gatewaykit/gatewaykit/store/redis/redistest"
)

// TestPing: the limiter answers a readiness check while its server does,
// and fails it when the server cannot be reached.
func TestPing(t *testing.T) {
	c, prefix := redistest.NewClient(t) // skips without Redis
	require.NoError(t, redis.NewLimiter(c, &redis.Options{Prefix: prefix}).Ping(context.Background()))

	down := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { down.Close() })
	require.ErrorContains(t, redis.NewLimiter(down, nil).Ping(context.Background()), "redis: ping")
}
