package auth

import (
	"context"
	"sync"
	"time"
)

// MemoryLimiterOptions are the settings of a [MemoryLimiter].
type MemoryLimiterOptions struct {
	// Now is the clock. nil means time.Now.
	Now func() time.Time
	// SweepInterval is how often idle buckets are evicted. Zero or less
	// means one minute.
	SweepInterval time.Duration
}

// MemoryLimiter is an in-memory token-bucket [Limiter] (implemented as
// GCRA, which stores one time per key and needs no background goroutine).
// It is safe for concurrent use and limits one process only: a fleet of
// gateways needs a shared Limiter.
//
// Memory is bounded: a bucket that has refilled completely is
// indistinguishable from a new one, so at most once per SweepInterval a
// call to Allow evicts every such bucket. What stays is one small entry
// per key seen within the last limit period plus SweepInterval — and the
// middleware calls Allow only for authenticated keys.
type MemoryLimiter struct {
	now   func() time.Time
	sweep time.Duration

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

// bucket is the GCRA state of one key: tat is the theoretical arrival
// time, the moment at which the bucket will be full again.
type bucket struct {
	tat time.Time
}

// NewMemoryLimiter returns an empty limiter. If opts is nil, the default
// options are used.
func NewMemoryLimiter(opts *MemoryLimiterOptions) *MemoryLimiter {
	l := &MemoryLimiter{now: time.Now, sweep: time.Minute, buckets: make(map[string]*bucket)}
	if opts != nil {
		if opts.Now != nil {
			l.now = opts.Now
		}
		if opts.SweepInterval > 0 {
			l.sweep = opts.SweepInterval
		}
	}
	l.lastSweep = l.now()
	return l
}

// Allow takes one token from keyID's bucket if there is one. It never
// returns an error.
func (l *MemoryLimiter) Allow(_ context.Context, keyID string, limit Limit) (Decision, error) {
	if limit.Unlimited() {
		return Decision{Allowed: true}, nil
	}
	window := limit.Window()
	interval := window / time.Duration(limit.Requests) // refill of one token
	if interval <= 0 {
		interval = 1
	}
	window = interval * time.Duration(limit.Requests)

	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.lastSweep) >= l.sweep {
		l.evictFull(now)
	}
	b := l.buckets[keyID]
	tat := now
	if b != nil && b.tat.After(now) {
		tat = b.tat
		// A lowered limit: never owe more than one full window.
		if tat.Sub(now) > window {
			tat = now.Add(window)
		}
	}
	next := tat.Add(interval)
	allowAt := next.Add(-window)
	if now.Before(allowAt) {
		return Decision{
			Limit:      limit.Requests,
			Reset:      tat.Sub(now),
			RetryAfter: allowAt.Sub(now),
		}, nil
	}
	if b == nil {
		b = &bucket{}
		l.buckets[keyID] = b
	}
	b.tat = next
	return Decision{
		Allowed:   true,
		Limit:     limit.Requests,
		Remaining: int(now.Sub(allowAt) / interval),
		Reset:     next.Sub(now),
	}, nil
}

// evictFull deletes the buckets that have refilled completely.
func (l *MemoryLimiter) evictFull(now time.Time) {
	for k, b := range l.buckets {
		if !b.tat.After(now) {
			delete(l.buckets, k)
		}
	}
	l.lastSweep = now
}

// Len returns the number of buckets held, including full ones not yet
// evicted.
func (l *MemoryLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
