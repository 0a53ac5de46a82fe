package redis_test

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/store/redis"
	"github.com/gatewaykit/gatewaykit/store/redis/redistest"
)

func TestPinger(t *testing.T) {
	c, prefix := redistest.NewClient(t) // skips without Redis
	gatewaytest.TestPinger(t, func(t *testing.T) gateway.Pinger {
		return redis.NewLimiter(c, &redis.Options{Prefix: prefix})
	})
}

// TestPingFailsWithoutTheServer: a limiter whose server cannot be
// reached fails a readiness check.
func TestPingFailsWithoutTheServer(t *testing.T) {
	down := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { down.Close() })
	require.ErrorContains(t, redis.NewLimiter(down, nil).Ping(context.Background()), "redis: ping")
}
