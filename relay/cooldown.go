package relay

import (
	"slices"
	"sync"
	"time"
)

// The default cool-down of an upstream that failed: see [WithCooldown].
const (
	DefaultCooldown    = time.Second
	DefaultMaxCooldown = 30 * time.Second
)

// WithCooldown sets the cool-down of an upstream that failed in a way
// that [Relay.Do] fails over on (unreachable, no headers within the
// FirstByte timeout, a 5xx, a 401 or 403): for that long, Do tries the route's other
// upstreams first. The first failure cools an upstream down for initial;
// each further failure in a row doubles the cool-down, up to max; a reply
// that is not a failure (any other status below 500) ends it and resets
// it.
// When a cool-down ends, one request tries the upstream again while the
// others still go elsewhere, until that request's outcome is known.
// The defaults are [DefaultCooldown] (1s) and [DefaultMaxCooldown] (30s);
// a value ≤ 0 keeps its default, and max is raised to initial if lower.
// Cool-downs are per upstream of each route, and shared by the backends
// and the access handler of a Relay.
func WithCooldown(initial, max time.Duration) Option {
	return option(func(c *config) {
		c.cooldown, c.maxCooldown = initial, max
	})
}

// health is the cool-down state of one upstream of a route. It is shared
// by the copies of a Relay (withTransport), hence a pointer in Relay.health.
type health struct {
	mu       sync.Mutex
	failures int           // failures in a row
	until    time.Time     // the end of the cool-down; zero when none
	last     time.Duration // the last cool-down
}

// cooling reports whether h cools down at now, and until when. When a
// cool-down has just ended, the first caller gets false and claims the
// probe: until that request's outcome is known (ok or fail), h looks
// cooling to the others for another cool-down as long as the last, so
// that a burst of requests does not all try an upstream that may still be
// dead.
func (h *health) cooling(now time.Time) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures == 0 {
		return time.Time{}, false
	}
	if now.Before(h.until) {
		return h.until, true
	}
	h.until = now.Add(h.last) // the probe's claim
	return h.until, false
}

// fail records a failure at now and returns the cool-down it starts.
func (h *health) fail(now time.Time, initial, max time.Duration) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := initial
	for i := 0; i < h.failures && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	h.failures++
	h.until = now.Add(d)
	h.last = d
	return d
}

// ok records a reply that is not a failure.
func (h *health) ok() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures != 0 {
		h.failures, h.until, h.last = 0, time.Time{}, 0
	}
}

// order appends to buf the indexes of hs in the order Do tries them: the
// upstreams that are not cooling down, in failover order, then those that
// are, the one whose cool-down ends first first.
func order(buf []int, hs []*health, now time.Time) []int {
	type cooled struct {
		i     int
		until time.Time
	}
	var stack [4]cooled
	cool := stack[:0]
	for i, h := range hs {
		if until, c := h.cooling(now); c {
			cool = append(cool, cooled{i, until})
		} else {
			buf = append(buf, i)
		}
	}
	slices.SortStableFunc(cool, func(a, b cooled) int { return a.until.Compare(b.until) })
	for _, c := range cool {
		buf = append(buf, c.i)
	}
	return buf
}
