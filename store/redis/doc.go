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
// # When Redis cannot be reached
//
// Allow returns the error, and the auth middleware fails open by default:
// requests are served without a rate limit (and without the
// x-ratelimit headers) for as long as the outage lasts, the failure is
// logged at most once every 10 seconds and reported to
// auth.WithLimiterErrorObserver (the Prometheus counter
// gatewaykit_rate_limiter_errors_total of module observe). Rate limits
// protect the gateway and its upstreams from bursts; an outage of Redis
// should not become an outage of the gateway. Quota and budgets in money
// are kept by the key store (PostgreSQL), not Redis, and are still
// enforced. Gateways that would rather refuse than serve unlimited
// requests fail closed with auth.WithLimiterFailure(auth.FailClosed):
// 503 service_unavailable with Retry-After (the example server's
// -redis-fail closed). Either way, a readiness check that asks the
// Limiter's Ping (gateway.Config.ReadyChecks, as the example server's
// GET /readyz does) reports Redis down.
//
// # Tests
//
// The tests need a server: set GATEWAYKIT_TEST_REDIS to a redis:// URL
// (package redistest); each test works under a key prefix of its own,
// whose keys are deleted afterwards. Without it they skip.
package redis
