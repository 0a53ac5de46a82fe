package relay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// An Attempt is one call of [Relay.Do] to one upstream, as an observer
// set by [WithAttemptObserver] sees it.
type Attempt struct {
	// Model is the public model id of the route.
	Model string
	// Upstream is the upstream's Name (its BaseURL's host by default):
	// never its key.
	Upstream string
	// Status is the HTTP status of the upstream's reply; 0 when none came
	// (unreachable, no headers within the FirstByte timeout, or the
	// client went away first).
	Status int
	// Err is the error of an attempt without a reply, or the client's
	// error of a failed one (a 5xx, a 401 or 403); nil for a reply that
	// Do returns.
	Err error
	// Failover reports that the attempt failed in a way that Do fails
	// over on: Do tries the route's next upstream, if it has one left.
	Failover bool
	// Duration is the time from sending the request to its reply's
	// headers (or to the failure).
	Duration time.Duration
}

// WithAttemptObserver sets a function that [Relay.Do] calls after each
// attempt at an upstream, on the request's goroutine, with ctx the
// request's context: for upstream metrics (requests by upstream and
// status, failovers). It must be safe for concurrent use and return
// quickly; it must not keep a.Err's reply. By default there is none.
func WithAttemptObserver(fn func(ctx context.Context, a Attempt)) Option {
	return option(func(c *config) { c.observe = fn })
}

// DefaultReadyWindow is how recently an upstream must have answered for
// [Relay.Ping] to report the relay ready without probing.
const DefaultReadyWindow = 30 * time.Second

// Ping reports whether at least one upstream answers, for a readiness
// check (package gateway's GET /readyz asks it). It is passive first: if
// any upstream gave [Relay.Do] a reply that is not a failure (below 500,
// and neither 401 nor 403) within the last [DefaultReadyWindow], the
// relay is ready and Ping sends nothing. Otherwise, an idle relay or one
// whose upstreams all fail, it probes: a GET of each distinct upstream's
// BaseURL + "/models" with its key, at once, through the relay's
// transport, and the first reply that is not a failure makes it ready
// (and counts as an answer for the window). So an idle gateway polled
// every 10 seconds probes its upstreams at most every 10 seconds, and a
// busy one never. Ping returns an error naming the upstreams that did not
// answer when none did; ctx bounds the probes.
func (r *Relay) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if last := r.answered.Load(); last != 0 && time.Since(time.Unix(0, last)) < DefaultReadyWindow {
		return nil
	}
	seen := make(map[string]bool)
	var probes []*Upstream
	for _, m := range r.models {
		for i := range r.routes[m] {
			u := &r.routes[m][i]
			if k := u.BaseURL + "\x00" + u.Key; !seen[k] {
				seen[k] = true
				probes = append(probes, u)
			}
		}
	}
	if len(probes) == 0 {
		return errors.New("relay: no upstream")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(probes))
	var wg sync.WaitGroup
	var ok atomic.Bool
	for i, u := range probes {
		wg.Go(func() {
			if errs[i] = r.probe(ctx, u); errs[i] == nil {
				ok.Store(true)
				cancel() // one answer is enough
			}
		})
	}
	wg.Wait()
	if ok.Load() {
		r.markAnswered()
		return nil
	}
	return fmt.Errorf("relay: no upstream answered: %w", errors.Join(errs...))
}

// probe asks u for its model list.
func (r *Relay) probe(ctx context.Context, u *Upstream) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.URL("/models"), nil)
	if err != nil {
		return fmt.Errorf("upstream %s: %w", u.Name, err)
	}
	if u.Key != "" {
		req.Header.Set("Authorization", "Bearer "+u.Key)
	}
	res, err := r.transport.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("upstream %s: %w", u.Name, ctx.Err())
		}
		return fmt.Errorf("upstream %s: unreachable", u.Name)
	}
	res.Body.Close()
	if res.StatusCode >= 500 || refused(res.StatusCode) {
		return fmt.Errorf("upstream %s: status %d", u.Name, res.StatusCode)
	}
	return nil
}

// markAnswered records that an upstream has just answered, for Ping. It
// writes the shared time at most once a second, so that concurrent
// requests do not all write one cache line.
func (r *Relay) markAnswered() {
	now := time.Now().UnixNano()
	if now-r.answered.Load() >= int64(time.Second) {
		r.answered.Store(now)
	}
}
