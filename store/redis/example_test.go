package redis_test

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/redis"
)

// ExampleNewLimiter limits a key to 2 requests a minute across every
// replica that shares the Redis server. It needs a Redis server, so it is
// compiled but not run by go test; the package's tests run the limiter
// against one.
func ExampleNewLimiter() {
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	limiter := redis.NewLimiter(client, &redis.Options{Prefix: "example:ratelimit:"})
	for range 3 {
		d, err := limiter.Allow(context.Background(), "key_1", auth.Limit{Requests: 2, Period: time.Minute})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(d.Allowed, d.Remaining)
	}
	// Wire it into the middleware with auth.WithLimiter(limiter).
}
