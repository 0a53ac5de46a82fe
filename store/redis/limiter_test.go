package redis_test

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	"github.com/gatewaykit/gatewaykit/store/redis"
	"github.com/gatewaykit/gatewaykit/store/redis/redistest"
)

func TestLimiter(t *testing.T) {
	c, prefix := redistest.NewClient(t) // skips the whole suite without Redis
	authtest.TestLimiter(t, func(t *testing.T, now func() time.Time) auth.Limiter {
		return redis.NewLimiter(c, &redis.Options{Prefix: prefix + rand.Text() + ":", Now: now})
	})
}

func TestLimiterSharesBucketsAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	limit := auth.Limit{Requests: 3, Period: time.Hour}
	tests := []struct {
		name string
		now  func() time.Time // nil: the server's clock
	}{
		{name: "ManualClock", now: authtest.NewClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)).Now},
		{name: "ServerClock"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, prefix := redistest.NewClient(t)
			a := redis.NewLimiter(c, &redis.Options{Prefix: prefix, Now: tc.now})
			b := redis.NewLimiter(c, &redis.Options{Prefix: prefix, Now: tc.now})
			var allowed []bool
			for i := range 6 {
				l := a
				if i%2 == 1 {
					l = b
				}
				d, err := l.Allow(ctx, "key_1", limit)
				require.NoError(t, err)
				allowed = append(allowed, d.Allowed)
			}
			require.Equal(t, []bool{true, true, true, false, false, false}, allowed)

			ttl, err := c.PTTL(ctx, prefix+"key_1").Result()
			require.NoError(t, err)
			require.Greater(t, ttl, time.Duration(0), "a bucket's key expires once the bucket is full again")
			require.LessOrEqual(t, ttl, limit.Period)
		})
	}
}

func TestNewLimiterPanicsOnANilClient(t *testing.T) {
	require.PanicsWithValue(t, "redis: NewLimiter: nil client", func() { redis.NewLimiter(nil, nil) })
}
