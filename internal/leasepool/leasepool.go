// Package leasepool holds the loop that package responses' Background
// and package videos/runner's Runner share: a bounded pool of workers
// that claim work from a store under leases (so that several processes
// may share one store), wait a poll interval when there is none, and
// stop on Shutdown or when their context ends.
package leasepool

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Pool runs claimed work on at most a fixed number of workers at once.
// Make it with [New]; its zero value is not usable.
type Pool struct {
	name    string // the Run method of the owner, in errors
	workers int
	poll    time.Duration

	wake     chan struct{}
	started  atomic.Bool
	stopOnce sync.Once
	stopping chan struct{} // closed by Shutdown: claim no more
	done     chan struct{} // closed when Run returns

	mu     sync.Mutex
	cancel context.CancelFunc // cancels the running work
}

// New returns a pool of workers that waits poll before claiming again
// when there was nothing to claim. name is the method that runs it
// ("runner: Runner.Run"), in the error of a second Run.
func New(name string, workers int, poll time.Duration) *Pool {
	return &Pool{name: name, workers: workers, poll: poll,
		wake: make(chan struct{}, 1), stopping: make(chan struct{}), done: make(chan struct{})}
}

// Wake makes a waiting pool claim at once, instead of at the end of its
// poll interval. It never blocks.
func (p *Pool) Wake() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// A Claim is how a pool gets and does its work.
type Claim[T any] struct {
	// Claim claims the next piece of work; it returns NoWork when there
	// is none.
	Claim  func(ctx context.Context) (T, error)
	NoWork error
	// Run does a claimed piece of work, on a worker of its own, with a
	// context that ends when Run's does (not at Shutdown).
	Run func(ctx context.Context, t T)
	// Logger logs a failed claim at error level, with the message
	// Failed.
	Logger *slog.Logger
	Failed string
}

// Run claims and runs work with c until ctx is done or Shutdown is
// called, and returns once every piece of work it started has returned:
// ctx.Err() if ctx ended it (the running work is cancelled), nil after
// Shutdown (the running work may finish), and an error if called twice.
func Run[T any](ctx context.Context, p *Pool, c Claim[T]) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New(p.name + " called twice")
	}
	defer close(p.done)
	workCtx, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	p.mu.Lock()
	p.cancel = cancelWork
	p.mu.Unlock()
	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	go func() {
		select {
		case <-p.stopping:
			stopLoop()
		case <-loopCtx.Done():
		}
	}()
	sem := semaphore.NewWeighted(int64(p.workers))
	var wg sync.WaitGroup
	timer := time.NewTimer(p.poll)
	timer.Stop()
	for {
		if err := sem.Acquire(loopCtx, 1); err != nil {
			break
		}
		t, err := c.Claim(loopCtx)
		if err == nil {
			wg.Go(func() {
				defer sem.Release(1)
				c.Run(workCtx, t)
			})
			continue
		}
		sem.Release(1)
		if loopCtx.Err() != nil {
			break
		}
		if !errors.Is(err, c.NoWork) {
			c.Logger.LogAttrs(ctx, slog.LevelError, c.Failed, slog.String("error", err.Error()))
		}
		timer.Reset(p.poll)
		select {
		case <-loopCtx.Done():
		case <-p.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
	wg.Wait()
	select {
	case <-p.stopping:
		return nil
	default:
		return ctx.Err()
	}
}

// Shutdown stops the pool claiming and waits for the running work to
// end; if ctx ends first, it cancels that work, waits for it to return
// and returns ctx.Err(). Shutdown before Run makes Run return at once.
// It is safe to call more than once.
func (p *Pool) Shutdown(ctx context.Context) error {
	p.stopOnce.Do(func() { close(p.stopping) })
	if !p.started.Load() {
		return nil
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	cancel := p.cancel
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	<-p.done
	return ctx.Err()
}

// Positive sets *dst to v if v is above zero: an option whose zero or
// negative values mean the default.
func Positive[T int | int64 | time.Duration](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// WorkerName returns name, or if it is empty a name for the workers of
// this process: host name (or host, if it has none), process id and a
// random suffix.
func WorkerName(name, host string) string {
	if name != "" {
		return name
	}
	h, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", cmp.Or(h, host), os.Getpid(), rand.Text()[:6])
}

// Heartbeat calls renew every interval (at least a millisecond), on a
// goroutine of its own, to renew the lease of a claimed piece of work,
// until stop is called or ctx ends. If ctx ends with the cause linger
// (not nil), it goes on until stop: the work keeps its lease while it
// records its end. stop waits for the goroutine to return; it may be
// called more than once.
func Heartbeat(ctx context.Context, interval time.Duration, linger error, renew func()) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(max(interval, time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				if linger == nil || context.Cause(ctx) != linger {
					return
				}
				select {
				case <-done:
					return
				case <-tick.C:
					renew()
				}
			case <-tick.C:
				renew()
			}
		}
	}()
	return sync.OnceFunc(func() { close(done); <-stopped })
}
