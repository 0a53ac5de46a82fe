package responses

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/leasepool"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// Defaults of a [Background].
const (
	// DefaultRunWorkers is how many runs a Background runs at once
	// ([WithWorkers]); more wait, queued.
	DefaultRunWorkers = 8
	// DefaultRunPoll is how long an idle Background waits before asking
	// its store for work again ([WithPollInterval]).
	DefaultRunPoll = time.Second
	// DefaultFollowPoll is how often a stream that follows a run on
	// another process asks the store for its new events
	// ([WithFollowInterval]).
	DefaultFollowPoll = 200 * time.Millisecond
	// DefaultRunRetention is how long an ended run and its event log are
	// kept ([WithRetention]).
	DefaultRunRetention = 24 * time.Hour
	// DefaultCancelCheck is how often a worker renews its run's lease and
	// so learns of a cancel made on another process ([WithCancelCheck]).
	DefaultCancelCheck = time.Second
)

// defaultEventsPerRead is how many events a follower reads at a time.
const defaultEventsPerRead = 500

// runStoreTimeout bounds each store write of a run made after its context
// is gone (the final record, an event flush at the end).
const runStoreTimeout = 10 * time.Second

// A BackgroundOption configures [NewBackground].
type BackgroundOption func(*bgConfig)

type bgConfig struct {
	workers     int
	poll        time.Duration
	follow      time.Duration
	lease       time.Duration
	check       time.Duration
	maxAttempts int
	retention   time.Duration
	name        string
	logger      *slog.Logger
	keys        auth.KeyStore
}

// WithWorkers sets how many runs a Background runs at once. Default
// [DefaultRunWorkers]; values below 1 mean 1.
func WithWorkers(n int) BackgroundOption { return func(c *bgConfig) { c.workers = max(n, 1) } }

// WithPollInterval sets how long a Background waits before asking its
// store for work again when it found none. Default [DefaultRunPoll];
// [Background.Wake] (which the handler calls at each create) cuts it short.
func WithPollInterval(d time.Duration) BackgroundOption {
	return func(c *bgConfig) { leasepool.Positive(&c.poll, d) }
}

// WithFollowInterval sets how often a stream that follows a run asks the
// store for new events when no worker of this process told it of any
// (the run is on another replica). Default [DefaultFollowPoll].
func WithFollowInterval(d time.Duration) BackgroundOption {
	return func(c *bgConfig) { leasepool.Positive(&c.follow, d) }
}

// WithLease sets the lease of a claimed run (see [RunStore]). Default
// [DefaultRunLease] (30 s): a run whose process died is taken over (or
// failed) by another once it runs out.
func WithLease(d time.Duration) BackgroundOption {
	return func(c *bgConfig) { leasepool.Positive(&c.lease, d) }
}

// WithCancelCheck sets how often the worker of a run renews its lease
// and so learns that the run was cancelled on another replica (a cancel
// on its own process stops it at once). Default [DefaultCancelCheck]
// (1 s), and never less often than a third of the lease.
func WithCancelCheck(d time.Duration) BackgroundOption {
	return func(c *bgConfig) { leasepool.Positive(&c.check, d) }
}

// WithMaxAttempts sets how many times a run that no client has seen any
// of may be claimed before a lease that runs out fails it. Default
// [DefaultRunMaxAttempts].
func WithMaxAttempts(n int) BackgroundOption {
	return func(c *bgConfig) { leasepool.Positive(&c.maxAttempts, n) }
}

// WithRetention sets how long an ended run (and the event log that GET
// ?stream=true replays) is kept. Default [DefaultRunRetention] (24 h).
// The response itself is kept by the handler's [Store] as any other.
func WithRetention(d time.Duration) BackgroundOption {
	return func(c *bgConfig) { leasepool.Positive(&c.retention, d) }
}

// WithWorkerName sets the name runs are claimed under. Default: host
// name, process id and a random suffix.
func WithWorkerName(name string) BackgroundOption {
	return func(c *bgConfig) { c.name = cmp.Or(name, c.name) }
}

// WithRunLogger sets the logger of the workers. Default: none.
func WithRunLogger(l *slog.Logger) BackgroundOption {
	return func(c *bgConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithKeyStore sets the store of the API keys whose quota a run reserved
// at create: the run's charge is settled there when it ends, whatever
// ends it. It must be the store given to auth.Middleware. Without it, a
// charged run's reservation is never settled (an error is logged).
func WithKeyStore(keys auth.KeyStore) BackgroundOption { return func(c *bgConfig) { c.keys = keys } }

// Background runs the background responses of a handler ("background":
// true; see the package documentation): a bounded pool of workers that
// claim runs from a [RunStore] with leases, so that several processes
// may share one store, as the video runner does. Give it to the handler
// with [WithBackground], then run it:
//
//	bg := responses.NewBackground(runs, responses.WithKeyStore(keys))
//	h := responses.NewHandler(catalog, backend, responses.WithBackground(bg))
//	go bg.Run(ctx)
//	…
//	bg.Shutdown(shutdownCtx)
type Background struct {
	runs RunStore
	cfg  bgConfig
	h    atomic.Pointer[handler]
	pool *leasepool.Pool

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc    // the runs of this process, by id
	subs    map[string]map[chan struct{}]struct{} // the followers of this process, by run id
	pruned  time.Time
}

// NewBackground returns the runner of the runs of store. It panics if
// store is nil.
func NewBackground(store RunStore, opts ...BackgroundOption) *Background {
	if store == nil {
		panic("responses: NewBackground: nil RunStore")
	}
	cfg := bgConfig{
		workers: DefaultRunWorkers, poll: DefaultRunPoll, follow: DefaultFollowPoll, lease: DefaultRunLease,
		check: DefaultCancelCheck, maxAttempts: DefaultRunMaxAttempts, retention: DefaultRunRetention,
		logger: slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.name = leasepool.WorkerName(cfg.name, "")
	return &Background{runs: store, cfg: cfg, pool: leasepool.New("responses: Background.Run", cfg.workers, cfg.poll), running: map[string]context.CancelCauseFunc{}, subs: map[string]map[chan struct{}]struct{}{}}
}

// WithBackground gives the handler the runner of its background
// responses; without it, "background": true is a 400. A Background
// serves one handler. Only this package takes it.
func WithBackground(b *Background) Option {
	return option(func(c *config) { c.background = b })
}

// Store returns the run store.
func (b *Background) Store() RunStore { return b.runs }

// Wake makes a waiting Background ask its store for work at once.
func (b *Background) Wake() { b.pool.Wake() }

// Run claims and runs runs until ctx is done or [Background.Shutdown] is
// called, and returns once every run it started has returned. When ctx
// is done the running runs are stopped and released (another process,
// or this one restarted, takes them over under the lease policy of
// [RunStore]); after Shutdown they may finish. It returns an error if
// called twice, or before a handler was given the Background.
func (b *Background) Run(ctx context.Context) error {
	if b.h.Load() == nil {
		return errors.New("responses: Background.Run: no handler has this Background (WithBackground)")
	}
	return leasepool.Run(ctx, b.pool, leasepool.Claim[*Run]{
		Claim: func(ctx context.Context) (*Run, error) {
			b.prune(ctx)
			run, reaped, err := b.runs.ClaimRun(ctx, RunClaim{Worker: b.cfg.name, Now: b.now(), Lease: b.cfg.lease, MaxAttempts: b.cfg.maxAttempts})
			for _, r := range reaped {
				b.reaped(ctx, r)
			}
			return run, err
		},
		NoWork: ErrNoRun,
		Run:    b.execute,
		Logger: b.cfg.logger,
		Failed: "responses: claiming a background run",
	})
}

// Shutdown stops claiming runs and waits for the running ones to end; if
// ctx ends first, it stops them (they are released) and returns
// ctx.Err(). It is safe to call more than once.
func (b *Background) Shutdown(ctx context.Context) error { return b.pool.Shutdown(ctx) }

func (b *Background) now() time.Time {
	if h := b.h.Load(); h != nil {
		return h.cfg.Now()
	}
	return time.Now()
}

// prune removes the runs that ended more than the retention ago, at most
// once a minute.
func (b *Background) prune(ctx context.Context) {
	now := b.now()
	if now.Sub(b.pruned) < time.Minute {
		return
	}
	b.pruned = now
	if _, err := b.runs.PruneRuns(ctx, now.Add(-b.cfg.retention)); err != nil {
		b.cfg.logger.LogAttrs(ctx, slog.LevelError, "responses: pruning background runs", slog.String("error", err.Error()))
	}
}

// reaped records the end of a run that a claim ended (its worker died):
// its final response is stored and its charge released.
func (b *Background) reaped(ctx context.Context, r *Run) {
	h := b.h.Load()
	ctx = context.WithoutCancel(ctx)
	if err := h.cfg.store.Put(ctx, &StoredResponse{Owner: r.Owner, Response: r.Response, Input: runInput(r)}); err != nil {
		b.cfg.logger.LogAttrs(ctx, slog.LevelError, "responses: storing a reaped run", slog.String("response_id", r.ID), slog.String("error", err.Error()))
	}
	b.settle(ctx, r, pipeline.Usage{})
	b.notify(r.ID)
}

// runInput is the stored input of r's request.
func runInput(r *Run) []Item {
	var req Request
	if err := req.UnmarshalJSON(r.Request); err != nil {
		return nil
	}
	return StoredItems(req.Input.AsItems())
}

// settle settles r's charge: u used (nothing, for a run that ended
// without a reply).
func (b *Background) settle(ctx context.Context, r *Run, u pipeline.Usage) {
	if r.Charge == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if b.cfg.keys == nil {
		b.cfg.logger.LogAttrs(ctx, slog.LevelError, "responses: a charged background run ended, but the Background has no key store (WithKeyStore): its quota stays reserved",
			slog.String("key_id", r.Charge.KeyID), slog.Int64("amount", r.Charge.Amount))
		return
	}
	p := auth.SettleParams{KeyID: r.Charge.KeyID, Reserved: r.Charge.Amount}
	if total := u.Total(); total > 0 {
		parts := u.Clamped()
		p.Used, p.InputTokens, p.OutputTokens, p.Model = total, max(u.Input, 0), max(u.Output, 0), r.Charge.Model
		p.CachedTokens, p.CacheWriteTokens, p.ReasoningTokens = parts.Cached, parts.CacheWrite, parts.Reasoning
		if h := b.h.Load(); h != nil {
			if m, err := h.catalog.Get(ctx, r.Charge.Model); err == nil && m != nil {
				p.CostUSD = m.Pricing.TokensCost(models.Tokens{Input: p.InputTokens, Output: p.OutputTokens,
					Cached: p.CachedTokens, CacheWrite: p.CacheWriteTokens, Reasoning: p.ReasoningTokens})
			}
		}
	}
	_, err := b.cfg.keys.Settle(ctx, p)
	if err != nil && !errors.Is(err, auth.ErrQuotaExceeded) {
		b.cfg.logger.LogAttrs(ctx, slog.LevelError, "responses: settling a background run", slog.String("response_id", r.ID), slog.String("error", err.Error()))
	}
}

// subscribe returns a channel that notify signals for run id.
func (b *Background) subscribe(id string) chan struct{} {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.subs[id]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		b.subs[id] = m
	}
	m[ch] = struct{}{}
	return ch
}

func (b *Background) unsubscribe(id string, ch chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs[id], ch)
	if len(b.subs[id]) == 0 {
		delete(b.subs, id)
	}
}

// notify tells this process's followers of run id that it has news.
func (b *Background) notify(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// stopLocal stops run id if this process runs it, with cause.
func (b *Background) stopLocal(id string, cause error) {
	b.mu.Lock()
	cancel := b.running[id]
	b.mu.Unlock()
	if cancel != nil {
		cancel(cause)
	}
}

// The causes that stop a run's backend.
var (
	errRunCancelled = errors.New("responses: background run cancelled")
	errRunGone      = errors.New("responses: background run no longer held")
	errRunDeleted   = errors.New("responses: background run deleted")
)

// execute runs one claimed run to its end and records it.
func (b *Background) execute(parent context.Context, run *Run) {
	h := b.h.Load()
	log := b.cfg.logger.With(slog.String("response_id", run.ID), slog.Int("attempt", run.Attempts))
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	b.mu.Lock()
	b.running[run.ID] = cancel
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.running, run.ID)
		b.mu.Unlock()
		b.notify(run.ID)
	}()

	update := func(p RunUpdate) error {
		p.ID, p.Attempt, p.Now = run.ID, run.Attempts, b.now()
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), runStoreTimeout)
		defer wcancel()
		_, err := b.runs.UpdateRun(wctx, p)
		switch {
		case errors.Is(err, ErrRunCancelled):
			cancel(errRunCancelled)
		case errors.Is(err, ErrNotFound):
			cancel(errRunDeleted)
		case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrRunEnded):
			cancel(errRunGone)
		case err != nil:
			log.LogAttrs(ctx, slog.LevelError, "responses: updating a background run", slog.String("error", err.Error()))
		}
		return err
	}
	// The heartbeat renews the lease, and so learns of a cancel made on
	// another process.
	stopHeartbeat := leasepool.Heartbeat(ctx, min(b.cfg.check, b.cfg.lease/3), errRunCancelled, func() {
		_ = update(RunUpdate{Lease: b.cfg.lease})
	})
	defer stopHeartbeat()

	rctx := context.WithoutCancel(ctx) // the records of the run's end outlive its cancellation
	fake, _ := http.NewRequestWithContext(rctx, http.MethodPost, "/v1/responses", nil)
	sink := &runSink{b: b, runs: b.runs, id: run.ID, attempt: run.Attempts, log: run.Stream, next: run.Events, stop: cancel}
	resp := run.Response
	resp.Status = StatusInProgress
	ew := &eventWriter{s: sink, h: h, r: fake, cur: -1, buf: make([]byte, 0, 2048), ref: make([]byte, 0, 64), resp: &resp}

	p, err := b.params(ctx, h, run)
	if err == nil {
		ew.call = &createCall{p: p, owner: run.Owner}
		// The handler's interceptors see the caller as the run knows it:
		// the key it charges, if any (the run settles its charge itself,
		// and does not keep the rest of the request's principal).
		caller := &auth.Principal{}
		if run.Charge != nil {
			caller.KeyID = run.Charge.KeyID
		}
		err = pipeline.WriteDeltas(auth.WithPrincipal(ctx, caller), sink, func(ctx context.Context, flush func()) iter.Seq2[Delta, error] {
			p.SetFlush(flush)
			return Deltas(ctx, h.answer, p)
		}, ew)
	} else {
		ew.call = &createCall{p: &Params{Request: &Request{}}, owner: run.Owner}
	}
	cause := context.Cause(ctx)
	switch {
	case cause == errRunGone:
		// Another worker has the run now (or a claim ended it): it
		// records the end and settles.
		log.LogAttrs(rctx, slog.LevelDebug, "responses: background run taken away")
		return
	case parent.Err() != nil && cause != errRunCancelled && cause != errRunDeleted:
		// This process stops: hand the run back.
		stopHeartbeat()
		_ = update(RunUpdate{Release: true})
		log.LogAttrs(rctx, slog.LevelDebug, "responses: background run released")
		return
	case cause == errRunDeleted:
		// The response was deleted: nothing to record, but what it used.
		stopHeartbeat()
		b.settle(rctx, run, ew.usedSoFar(run.Prompt))
		return
	case cause == errRunCancelled:
		ew.cancelled()
	case err == nil:
		if err = ew.Finish(); err != nil {
			ew.End(fake, err)
		}
	default:
		ew.End(fake, err)
	}
	_ = sink.Flush()
	stopHeartbeat()
	final := *ew.resp
	if err := update(RunUpdate{Finish: &final}); err != nil && !errors.Is(err, ErrNotFound) {
		log.LogAttrs(rctx, slog.LevelError, "responses: recording the end of a background run", slog.String("error", err.Error()))
	}
	b.settle(rctx, run, ew.usedSoFar(run.Prompt))
	log.LogAttrs(rctx, slog.LevelDebug, "responses: background run ended", slog.String("status", string(ew.resp.Status)))
}

// params makes the backend's Params of run: its request (asked of the
// backend in the foreground: Background cleared, and no client body, so
// that a relay encodes the request as it is here), its model and its
// conversation.
func (b *Background) params(ctx context.Context, h *handler, run *Run) (*Params, error) {
	req := new(Request)
	if err := req.UnmarshalJSON(run.Request); err != nil {
		return nil, apierrors.Internal(fmt.Errorf("responses: decoding the request of run %s: %w", run.ID, err))
	}
	req.Background = nil
	m, err := h.catalog.Get(ctx, req.Model)
	if err != nil {
		return nil, apierrors.FromDependency(ctx, fmt.Errorf("responses: the model of run %s: %w", run.ID, err))
	}
	history, _, err := h.history(ctx, run.Owner, req.PreviousResponseID)
	if err == nil && req.Conversation != nil {
		history, _, err = h.conversationHistory(ctx, run.Owner, req)
	}
	if err != nil {
		return nil, err
	}
	return &Params{Request: req, Model: m, History: history, background: true}, nil
}

// runSink is the eventSink of a background run: it keeps the events of
// a streamed run, and appends them to the run's log at each flush.
type runSink struct {
	b       *Background
	runs    RunStore
	id      string
	attempt int
	log     bool
	next    int
	pending []Event
	stop    context.CancelCauseFunc
}

func (s *runSink) WriteRaw(event string, data []byte) error {
	if s.log {
		s.pending = append(s.pending, Event{Seq: s.next, Type: event, Data: bytes.Clone(data)})
		s.next++
	}
	return nil
}

func (s *runSink) Flush() error {
	if len(s.pending) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), runStoreTimeout)
	defer cancel()
	err := s.runs.AppendEvents(ctx, s.id, s.attempt, s.pending)
	switch {
	case errors.Is(err, ErrLeaseLost), errors.Is(err, ErrRunEnded), errors.Is(err, ErrNotFound):
		s.stop(errRunGone)
		return err
	case err != nil:
		return err
	}
	s.pending = s.pending[:0]
	s.b.notify(s.id)
	return nil
}

func (s *runSink) Done() error           { return s.Flush() }
func (s *runSink) Error(err error) error { return nil }
func (s *runSink) Started() bool         { return true }
