package authtest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// TestLimiter checks the auth.Limiter contract: token-bucket semantics
// (Requests at once, then one every Period/Requests), exact under
// concurrency, with truthful Decision fields. newLimiter is called once
// per subtest and must return an empty limiter that reads the time from
// now; the suite moves that clock instead of sleeping. Subtests run in
// parallel.
func TestLimiter(t *testing.T, newLimiter func(t *testing.T, now func() time.Time) auth.Limiter) {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

	setup := func(t *testing.T) (auth.Limiter, *Clock) {
		t.Helper()
		clock := NewClock(start)
		l := newLimiter(t, clock.Now)
		require.NotNil(t, l, "newLimiter returned nil")
		return l, clock
	}
	allow := func(t *testing.T, l auth.Limiter, key string, limit auth.Limit) auth.Decision {
		t.Helper()
		d, err := l.Allow(ctx, key, limit)
		require.NoError(t, err)
		return d
	}
	// Five requests per five seconds: one token a second.
	five := auth.Limit{Requests: 5, Period: 5 * time.Second}
	exhaust := func(t *testing.T, l auth.Limiter, key string, limit auth.Limit) {
		t.Helper()
		for i := range limit.Requests {
			require.True(t, allow(t, l, key, limit).Allowed, "request %d of a burst of %d", i+1, limit.Requests)
		}
	}

	t.Run("AllowsABurstOfRequestsThenRefuses", func(t *testing.T) {
		t.Parallel()
		l, _ := setup(t)
		for i := range five.Requests {
			d := allow(t, l, "k", five)
			require.True(t, d.Allowed, "request %d", i+1)
			require.Equal(t, five.Requests, d.Limit)
			require.Equal(t, five.Requests-1-i, d.Remaining, "Remaining after request %d", i+1)
		}
		d := allow(t, l, "k", five)
		require.False(t, d.Allowed)
		require.Equal(t, five.Requests, d.Limit)
		require.Equal(t, 0, d.Remaining)
		require.Greater(t, d.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, d.RetryAfter, time.Second)
	})

	t.Run("ReportsResetAsTheTimeUntilTheBucketIsFull", func(t *testing.T) {
		t.Parallel()
		l, _ := setup(t)
		var prev time.Duration
		for i := range five.Requests {
			d := allow(t, l, "k", five)
			require.Greater(t, d.Reset, prev, "Reset after request %d must grow", i+1)
			require.LessOrEqual(t, d.Reset, five.Period)
			prev = d.Reset
		}
		require.Equal(t, five.Period, prev, "Reset of an emptied bucket")
		d := allow(t, l, "k", five)
		require.False(t, d.Allowed)
		require.Equal(t, five.Period, d.Reset, "a refused request takes nothing")
	})

	t.Run("RefillsOneRequestPerInterval", func(t *testing.T) {
		t.Parallel()
		l, clock := setup(t)
		exhaust(t, l, "k", five)
		clock.Advance(time.Second)
		d := allow(t, l, "k", five)
		require.True(t, d.Allowed)
		require.Equal(t, 0, d.Remaining)
		require.False(t, allow(t, l, "k", five).Allowed)
	})

	t.Run("RefillsCompletelyAfterThePeriod", func(t *testing.T) {
		t.Parallel()
		l, clock := setup(t)
		exhaust(t, l, "k", five)
		clock.Advance(five.Period)
		exhaust(t, l, "k", five)
		require.False(t, allow(t, l, "k", five).Allowed)
	})

	t.Run("NeverHoldsMoreThanABurstAfterIdling", func(t *testing.T) {
		t.Parallel()
		l, clock := setup(t)
		allow(t, l, "k", five)
		clock.Advance(time.Hour)
		exhaust(t, l, "k", five)
		require.False(t, allow(t, l, "k", five).Allowed)
	})

	t.Run("AllowsARequestOnceRetryAfterHasPassed", func(t *testing.T) {
		t.Parallel()
		l, clock := setup(t)
		exhaust(t, l, "k", five)
		d := allow(t, l, "k", five)
		require.False(t, d.Allowed)
		clock.Advance(d.RetryAfter)
		require.True(t, allow(t, l, "k", five).Allowed)
	})

	t.Run("KeepsKeysApart", func(t *testing.T) {
		t.Parallel()
		l, _ := setup(t)
		exhaust(t, l, "a", five)
		require.False(t, allow(t, l, "a", five).Allowed)
		d := allow(t, l, "b", five)
		require.True(t, d.Allowed)
		require.Equal(t, five.Requests-1, d.Remaining)
	})

	t.Run("AlwaysAllowsAnUnlimitedLimit", func(t *testing.T) {
		t.Parallel()
		l, _ := setup(t)
		for _, limit := range []auth.Limit{{}, {Requests: -1, Period: time.Second}} {
			for range 100 {
				require.True(t, allow(t, l, "k", limit).Allowed)
			}
		}
	})

	t.Run("ReadsAZeroPeriodAsOneMinute", func(t *testing.T) {
		t.Parallel()
		l, clock := setup(t)
		perMinute := auth.Limit{Requests: 2}
		exhaust(t, l, "k", perMinute)
		d := allow(t, l, "k", perMinute)
		require.False(t, d.Allowed)
		require.Equal(t, 30*time.Second, d.RetryAfter)
		clock.Advance(30 * time.Second)
		require.True(t, allow(t, l, "k", perMinute).Allowed)
	})

	t.Run("ReportsTheLimitItWasGiven", func(t *testing.T) {
		t.Parallel()
		l, _ := setup(t)
		require.Equal(t, 5, allow(t, l, "k", five).Limit)
		require.Equal(t, 100, allow(t, l, "k", auth.PerMinute(100)).Limit)
	})

	t.Run("NeverAllowsMoreThanTheLimitConcurrently", func(t *testing.T) {
		t.Parallel()
		const goroutines = 256
		limit := auth.Limit{Requests: 50, Period: time.Hour}
		l, _ := setup(t)
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				d, err := l.Allow(ctx, "k", limit)
				if err != nil {
					t.Errorf("Allow: %v", err)
				}
				if d.Allowed {
					allowed.Add(1)
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(limit.Requests), allowed.Load())
	})
}
