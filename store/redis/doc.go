// Package redis enforces gatewaykit's rate limits in Redis (through
// go-redis), so that a key's limit holds across every gateway replica
// that shares the server: [Limiter] is an auth.Limiter, given to the
// auth middleware with auth.WithLimiter, and passes the conformance
// suite authtest.TestLimiter.
//
//	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379"})
//	limiter := redis.NewLimiter(client, nil)
//	mw := auth.Middleware(keys, auth.WithLimiter(limiter))
//
// Each decision is one Lua script, run atomically by Redis: a token
// bucket (GCRA) with the semantics of auth.MemoryLimiter — Requests at
// once, then one every Period/Requests — and the same Decision fields
// (Remaining, Reset, RetryAfter). A bucket is one Redis string under
// [Options.Prefix] followed by the key id, which expires once the bucket
// is full again, so idle keys cost nothing. Times come from the Redis
// server's clock, so replicas whose clocks differ still agree.
//
// # Tests
//
// The tests need a server: set GATEWAYKIT_TEST_REDIS to a redis:// URL
// (package redistest); each test works under a key prefix of its own,
// whose keys are deleted afterwards. Without it they skip.
package redis
