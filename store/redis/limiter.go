package redis

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/gatewaykit/gatewaykit/auth"
)

// DefaultPrefix starts the Redis keys of a [Limiter].
const DefaultPrefix = "gatewaykit:ratelimit:"

// Options are the settings of a [Limiter]. A nil *Options means the
// defaults.
type Options struct {
	// Prefix starts the Redis key of every bucket (the prefix followed
	// by the API key's id); "" means DefaultPrefix. Give each gateway
	// fleet sharing a Redis server its own.
	Prefix string
	// Now is the clock. nil means the Redis server's clock (the TIME
	// command, inside the script), so that every replica reads the same
	// time; tests set a manual clock.
	Now func() time.Time
}

// Limiter is an [auth.Limiter] whose token buckets live in Redis, so
// that a key's rate limit holds across every gateway replica that shares
// the server. Each decision is one atomic Lua script (GCRA, as
// [auth.MemoryLimiter]: one number per key, the time at which its bucket
// is full again, which expires from Redis when the bucket is full). It is
// safe for concurrent use.
//
// When Redis cannot be reached, Allow returns the error, and the auth
// middleware decides (auth.WithLimiterFailure): by default it fails open,
// serving the request without a rate limit; failing closed, it answers
// 503 service_unavailable with Retry-After.
type Limiter struct {
	client goredis.Scripter
	prefix string
	now    func() time.Time
}

var _ auth.Limiter = (*Limiter)(nil)

//go:embed gcra.lua
var gcraSource string

var gcra = goredis.NewScript(gcraSource)

// NewLimiter returns a Limiter on client (a *redis.Client, a
// *redis.ClusterClient or a *redis.Ring from go-redis). If opts is nil,
// the default options are used. It panics on a nil client.
func NewLimiter(client goredis.Scripter, opts *Options) *Limiter {
	if client == nil {
		panic("redis: NewLimiter: nil client")
	}
	l := &Limiter{client: client, prefix: DefaultPrefix}
	if opts != nil {
		if opts.Prefix != "" {
			l.prefix = opts.Prefix
		}
		l.now = opts.Now
	}
	return l
}

// Allow implements [auth.Limiter]: it takes one token from keyID's
// bucket if there is one.
func (l *Limiter) Allow(ctx context.Context, keyID string, limit auth.Limit) (auth.Decision, error) {
	if limit.Unlimited() {
		return auth.Decision{Allowed: true}, nil
	}
	// The arithmetic of auth.MemoryLimiter, in microseconds (Lua numbers
	// are doubles: exact up to 2^53 µs, about 285 years).
	interval := limit.Window() / time.Duration(limit.Requests)
	intervalUS := max(interval.Microseconds(), 1)
	windowUS := intervalUS * int64(limit.Requests)
	var nowUS int64 = -1 // the script reads the server's clock
	if l.now != nil {
		nowUS = l.now().UnixMicro()
	}
	res, err := gcra.Run(ctx, l.client, []string{l.prefix + keyID}, nowUS, intervalUS, windowUS).Int64Slice()
	if err != nil {
		return auth.Decision{}, fmt.Errorf("redis: rate limit of key %q: %w", keyID, err)
	}
	if len(res) != 4 {
		return auth.Decision{}, errors.New("redis: rate limit script returned an unexpected reply")
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return auth.Decision{
		Allowed:    res[0] == 1,
		Limit:      limit.Requests,
		Remaining:  int(res[1]),
		Reset:      us(res[2]),
		RetryAfter: us(res[3]),
	}, nil
}

// Ping reports whether the Redis server answers: it asks whether the
// limiter's script is loaded (SCRIPT EXISTS, a round trip that changes
// nothing), within ctx. A gateway's readiness check asks it (package
// gateway's Pinger; the example server names it "redis").
func (l *Limiter) Ping(ctx context.Context) error {
	if err := l.client.ScriptExists(ctx, gcra.Hash()).Err(); err != nil {
		return fmt.Errorf("redis: ping: %w", err)
	}
	return nil
}
