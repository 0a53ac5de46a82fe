package authtest

import (
	"sync"
	"time"
)

// Clock is a manual clock for tests: time moves only when Advance is
// called. It is safe for concurrent use; pass its Now method wherever a
// func() time.Time is expected (auth.MemoryLimiterOptions.Now).
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock stopped at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
