package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/leasepool"
	"github.com/gatewaykit/gatewaykit/videos"
)

// Defaults of the [Runner].
const (
	DefaultWorkers           = 4
	DefaultPollInterval      = time.Second
	DefaultGenerationTimeout = time.Hour
)

// storeTimeout bounds each store and content write that finishes a task
// after its context is gone (a release at shutdown, a failure record).
const storeTimeout = 10 * time.Second

// The tries at storing a finished task's result: its content and its
// completion are written up to storeTries times, waiting storeBackoff
// before the second try and twice as long before each next one (0.5 s,
// 1 s, 2 s, 4 s, 8 s: about 15 s in all), so that a store that fails for
// a moment (a database that restarts) does not fail a video that was
// generated.
const (
	storeTries   = 6
	storeBackoff = 500 * time.Millisecond
)

// An Option configures [New].
type Option func(*config)

type config struct {
	workers     int
	poll        time.Duration
	lease       time.Duration
	maxAttempts int
	timeout     time.Duration
	name        string
	logger      *slog.Logger
	now         func() time.Time
	keys        auth.KeyStore
	backoff     time.Duration // storeBackoff, but in tests
}

// WithKeyStore sets the store of the API keys whose quota the video
// handler reserves for each task (see [videos.WithPricing] and [videos.Task.Charge]):
// the runner charges a task's reservation when the task completes, and
// releases it when the task fails. It must be the store given to
// auth.Middleware. Without it, a charged task's reservation is never
// settled, and the runner logs an error for each such task.
func WithKeyStore(keys auth.KeyStore) Option { return func(c *config) { c.keys = keys } }

// WithWorkers sets how many tasks the runner generates at once. Default
// [DefaultWorkers] (4); values below 1 mean 1.
func WithWorkers(n int) Option { return func(c *config) { c.workers = max(n, 1) } }

// WithPollInterval sets how long the runner waits before asking the store
// again when it found nothing to claim (or the store failed). Default
// [DefaultPollInterval] (1s). [Runner.Wake] cuts a wait short.
func WithPollInterval(d time.Duration) Option {
	return func(c *config) { leasepool.Positive(&c.poll, d) }
}

// WithLease sets the lease of a claim (see [videos.TaskStore]). The runner
// renews it at every progress report and every third of it. Default
// [videos.DefaultLease] (1 minute).
func WithLease(d time.Duration) Option { return func(c *config) { leasepool.Positive(&c.lease, d) } }

// WithMaxAttempts sets how many times a task may be claimed before a run
// out lease fails it (see [videos.TaskStore]). Default [videos.DefaultMaxAttempts] (3).
func WithMaxAttempts(n int) Option { return func(c *config) { leasepool.Positive(&c.maxAttempts, n) } }

// WithGenerationTimeout bounds one call of [videos.Generator.Generate]; a task
// that takes longer fails with generation_failed. Default
// [DefaultGenerationTimeout] (1 hour); 0 or less means no bound.
func WithGenerationTimeout(d time.Duration) Option { return func(c *config) { c.timeout = max(d, 0) } }

// WithWorkerName sets the name the runner claims tasks under (the videos.Task's
// Worker field, and logs). Default: host name, process id and a random
// suffix.
func WithWorkerName(name string) Option { return func(c *config) { c.name = cmp.Or(name, c.name) } }

// WithLogger sets the runner's logger: claims and outcomes at debug
// level, failed tasks at info, store and content failures at error. By
// default, and for nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithClock sets the clock whose time the runner passes to the
// store (claims, lease renewals, completion times). Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// Runner moves video tasks from queued to completed or failed: it claims
// tasks from a [videos.TaskStore], at most a fixed number at once, calls the
// [videos.Generator], saves the progress it reports, puts the result in the
// [videos.ContentStore] and records the outcome. Several runners (in several
// processes) may share one store: the store's leases keep them from
// running a task twice.
//
// Start it with [Runner.Run] and stop it with [Runner.Shutdown] or by
// cancelling Run's context:
//
//	r := runner.New(store, gen, contents)
//	go r.Run(ctx)
//	…
//	err := r.Shutdown(shutdownCtx) // waits for the running tasks
//
// A Runner runs once: Run may be called only once.
type Runner struct {
	store    videos.TaskStore
	gen      videos.Generator
	contents videos.ContentStore
	cfg      config
	pool     *leasepool.Pool
}

// New returns a runner. It panics if store, gen or contents is nil.
func New(store videos.TaskStore, gen videos.Generator, contents videos.ContentStore, opts ...Option) *Runner {
	switch {
	case store == nil:
		panic("runner: New: nil TaskStore")
	case gen == nil:
		panic("runner: New: nil Generator")
	case contents == nil:
		panic("runner: New: nil ContentStore")
	}
	cfg := config{
		workers:     DefaultWorkers,
		poll:        DefaultPollInterval,
		lease:       videos.DefaultLease,
		maxAttempts: videos.DefaultMaxAttempts,
		timeout:     DefaultGenerationTimeout,
		logger:      slog.New(slog.DiscardHandler),
		now:         time.Now,
		backoff:     storeBackoff,
	}
	for _, o := range opts {
		o(&cfg)
	}
	cfg.name = leasepool.WorkerName(cfg.name, "runner")
	return &Runner{store: store, gen: gen, contents: contents, cfg: cfg,
		pool: leasepool.New("runner: Runner.Run", cfg.workers, cfg.poll)}
}

// Wake makes a waiting runner ask the store for work at once, instead of
// at the end of its poll interval. Call it after creating a task (see
// [videos.WithNotify]). It never blocks and is safe for concurrent use.
func (r *Runner) Wake() { r.pool.Wake() }

// Run claims and runs tasks until ctx is done or [Runner.Shutdown] is
// called, and returns once every task it started has returned. When ctx
// is done the running tasks are cancelled and their leases released, so
// that another runner picks them up at once; after Shutdown they are
// allowed to finish (see there). Run returns ctx.Err() if ctx ended it,
// nil after Shutdown, and an error if called twice.
func (r *Runner) Run(ctx context.Context) error {
	return leasepool.Run(ctx, r.pool, leasepool.Claim[*videos.Task]{
		Claim: func(ctx context.Context) (*videos.Task, error) {
			return r.store.Claim(ctx, videos.ClaimParams{Worker: r.cfg.name, Now: r.cfg.now(), Lease: r.cfg.lease, MaxAttempts: r.cfg.maxAttempts})
		},
		NoWork: videos.ErrNoTask,
		Run:    r.runTask,
		Logger: r.cfg.logger,
		Failed: "videos: claiming a task",
	})
}

// Shutdown stops the runner claiming tasks and waits for the running ones
// to finish. If ctx ends first, it cancels them (their leases are
// released, so another runner picks them up at once), waits for them to
// return, and returns ctx.Err(). Shutdown before Run makes Run return at
// once. It is safe to call more than once.
func (r *Runner) Shutdown(ctx context.Context) error { return r.pool.Shutdown(ctx) }

// errLeaseGone is the cancellation cause of a task that this runner may no
// longer record: deleted, taken over, or finished elsewhere.
var errLeaseGone = errors.New("videos: task no longer held")

// runTask generates one claimed task and records the outcome.
func (r *Runner) runTask(parent context.Context, t *videos.Task) {
	log := r.cfg.logger.With(slog.String("task_id", t.ID), slog.Int("attempt", t.Attempts))
	log.LogAttrs(parent, slog.LevelDebug, "videos: task claimed")

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	genCtx, cancelGen := ctx, context.CancelFunc(func() {})
	if r.cfg.timeout > 0 {
		genCtx, cancelGen = context.WithTimeout(ctx, r.cfg.timeout)
	}
	defer cancelGen()

	// Every store write of this attempt goes through update, which turns
	// the loss of the task into a cancellation of the generator.
	var deleted atomic.Bool
	update := func(p videos.UpdateParams) (*videos.Task, error) {
		p.ID, p.Attempt, p.Now = t.ID, t.Attempts, r.cfg.now()
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer wcancel()
		got, err := r.store.Update(wctx, p)
		switch {
		case errors.Is(err, videos.ErrNotFound):
			deleted.Store(true)
			cancel(errLeaseGone)
		case errors.Is(err, videos.ErrLeaseLost), errors.Is(err, videos.ErrFinished):
			cancel(errLeaseGone)
		case err != nil:
			log.LogAttrs(ctx, slog.LevelError, "videos: updating a task", slog.String("error", err.Error()))
		}
		return got, err
	}

	// Heartbeat: renew the lease at a third of its length, until the
	// outcome is about to be recorded.
	stopHeartbeat := leasepool.Heartbeat(ctx, r.cfg.lease/3, nil, func() {
		_, _ = update(videos.UpdateParams{Lease: r.cfg.lease})
	})
	defer stopHeartbeat()

	var (
		progressMu sync.Mutex
		last       = t.Progress
	)
	progress := func(p int) {
		p = min(max(p, 0), 100)
		progressMu.Lock()
		defer progressMu.Unlock()
		if p <= last || ctx.Err() != nil {
			return
		}
		if _, err := update(videos.UpdateParams{Progress: p, Lease: r.cfg.lease}); err == nil {
			last = p
		}
	}

	res, genErr := r.generate(genCtx, t, progress)
	if genErr != nil || context.Cause(ctx) == errLeaseGone {
		stopHeartbeat()
	}

	switch {
	case context.Cause(ctx) == errLeaseGone:
		log.LogAttrs(parent, slog.LevelDebug, "videos: task taken away", slog.Bool("deleted", deleted.Load()))
		if deleted.Load() {
			r.deleteContent(parent, t.ID, log)
		}
	case genErr == nil:
		// Finished, even if the runner is stopping meanwhile: record it,
		// trying again while the stores fail (the lease is still renewed).
		completion, err := r.storeResult(ctx, t, res, log)
		stopHeartbeat()
		if err == nil {
			err = r.tryAgain(ctx, "recording the completion", log, func() error {
				_, err := update(videos.UpdateParams{Complete: completion})
				return err
			})
		}
		switch {
		case err == nil:
			r.settle(parent, t, true, log)
			log.LogAttrs(parent, slog.LevelDebug, "videos: task completed")
		case context.Cause(ctx) == errLeaseGone:
			if deleted.Load() {
				r.deleteContent(parent, t.ID, log)
			}
		case parent.Err() != nil:
			// The runner is stopping for good while the stores fail: hand
			// the task back, to be generated again.
			_, err := update(videos.UpdateParams{Release: true})
			log.LogAttrs(parent, slog.LevelDebug, "videos: task released", slog.Bool("ok", err == nil))
		case completion == nil:
			r.fail(ctx, t, update, err, log)
		}
		// A completion that could not be recorded leaves the task in
		// progress: once its lease runs out, a runner claims it again.
	case parent.Err() != nil:
		// The runner is stopping: hand the task back.
		_, err := update(videos.UpdateParams{Release: true})
		log.LogAttrs(parent, slog.LevelDebug, "videos: task released", slog.Bool("ok", err == nil))
	case errors.Is(genCtx.Err(), context.DeadlineExceeded):
		r.fail(ctx, t, update, &videos.Failure{
			Message: fmt.Sprintf("Video generation timed out after %s.", r.cfg.timeout),
			Err:     genErr,
		}, log)
	default:
		r.fail(ctx, t, update, genErr, log)
	}
}

// generate calls the generator, turning a panic into an error so that one
// bad task cannot take the runner down.
func (r *Runner) generate(ctx context.Context, t *videos.Task, progress func(int)) (res *videos.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("videos: generator panic: %v", p)
		}
	}()
	res, err = r.gen.Generate(ctx, t.Clone(), progress)
	if err == nil && res == nil {
		err = errors.New("videos: generator returned no result and no error")
	}
	return res, err
}

// fail records err as the failure of t, and releases its charge.
func (r *Runner) fail(ctx context.Context, t *videos.Task, update func(videos.UpdateParams) (*videos.Task, error), err error, log *slog.Logger) {
	te := failureOf(err)
	log.LogAttrs(ctx, slog.LevelInfo, "videos: task failed",
		slog.String("code", te.Code), slog.String("error", err.Error()))
	if _, err := update(videos.UpdateParams{Fail: &te}); err == nil {
		r.settle(ctx, t, false, log)
	}
}

func failureOf(err error) videos.TaskError {
	var (
		f   *videos.Failure
		api *apierrors.Error
	)
	switch {
	case errors.As(err, &f):
		msg := f.Message
		if msg == "" {
			msg = "Video generation failed."
		}
		code := f.Code
		if code == "" {
			code = videos.CodeGenerationFailed
		}
		return videos.TaskError{Code: code, Message: msg}
	case errors.As(err, &api) && api.Message != "":
		return videos.TaskError{Code: videos.CodeGenerationFailed, Message: api.Message}
	default:
		return videos.TaskError{Code: videos.CodeGenerationFailed, Message: "Video generation failed."}
	}
}

// tryAgain calls write up to storeTries times, with a back-off, until it
// succeeds, fails for good (final), or ctx ends; it logs each failure
// and returns the last error.
func (r *Runner) tryAgain(ctx context.Context, what string, log *slog.Logger, write func() error) error {
	wait := r.cfg.backoff
	for try := 1; ; try++ {
		err := write()
		if err == nil || try == storeTries || final(err) || ctx.Err() != nil {
			return err
		}
		log.LogAttrs(ctx, slog.LevelWarn, "videos: "+what+" failed; trying again",
			slog.Int("try", try), slog.Duration("wait", wait), slog.String("error", err.Error()))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait *= 2
	}
}

// final reports whether err is one that trying a write again would not
// mend: invalid parameters, or a task that is no longer this runner's.
func final(err error) bool {
	for _, target := range []error{videos.ErrInvalidParams, videos.ErrNotFound, videos.ErrLeaseLost, videos.ErrFinished} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// storeResult puts the result's bytes in the content store and returns
// the completion to record. Each Put is tried again while it fails
// (tryAgain); ctx ends the tries early (the lease is lost, or the
// runner stops for good).
func (r *Runner) storeResult(ctx context.Context, t *videos.Task, res *videos.Result, log *slog.Logger) (*videos.Completion, error) {
	c := &videos.Completion{
		Metadata:           res.Metadata,
		ExpiresAt:          res.ExpiresAt,
		RemixedFromVideoID: res.RemixedFromVideoID,
	}
	c.Metadata.URL, c.Metadata.ThumbnailURL = "", ""
	if d := res.Metadata.Duration; d > 0 {
		c.Seconds = strconv.FormatFloat(d, 'f', -1, 64)
	}
	if w, h := res.Metadata.Width, res.Metadata.Height; w > 0 && h > 0 {
		c.Size = fmt.Sprintf("%dx%d", w, h)
	}
	url, err := r.putMedia(ctx, t.ID, videos.VariantVideo, &res.Video, log)
	if err != nil {
		return nil, err
	}
	c.Metadata.URL = url
	if res.Thumbnail != nil {
		url, err := r.putMedia(ctx, t.ID, videos.VariantThumbnail, res.Thumbnail, log)
		if err != nil {
			return nil, err
		}
		c.Metadata.ThumbnailURL = url
		c.HasThumbnail = true
	}
	return c, nil
}

// putMedia stores m's bytes, or returns its URL.
func (r *Runner) putMedia(ctx context.Context, id string, v videos.Variant, m *videos.Media, log *slog.Logger) (string, error) {
	switch {
	case len(m.Data) > 0:
		ct := m.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		err := r.tryAgain(ctx, "storing the "+string(v), log, func() error {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
			defer cancel()
			return r.contents.Put(wctx, videos.PutParams{TaskID: id, Variant: v, ContentType: ct, Data: m.Data})
		})
		if err != nil {
			return "", &videos.Failure{Message: "The generated video could not be stored.", Err: err}
		}
		return "", nil
	case m.URL != "":
		return m.URL, nil
	default:
		return "", &videos.Failure{Message: "Video generation produced no " + string(v) + ".",
			Err: fmt.Errorf("videos: generator result has an empty %s", v)}
	}
}

func (r *Runner) deleteContent(ctx context.Context, id string, log *slog.Logger) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := r.contents.Delete(wctx, id); err != nil {
		log.LogAttrs(ctx, slog.LevelError, "videos: deleting content", slog.String("error", err.Error()))
	}
}

// settle settles the charge of t, which has just completed (used) or
// failed (not used), through the runner's key store.
func (r *Runner) settle(ctx context.Context, t *videos.Task, used bool, log *slog.Logger) {
	if t.Charge == nil {
		return
	}
	if r.cfg.keys == nil {
		log.LogAttrs(ctx, slog.LevelError, "videos: a charged task finished, but the runner has no key store (WithKeyStore): its quota stays reserved",
			slog.String("key_id", t.Charge.KeyID), slog.Int64("amount", t.Charge.Amount))
		return
	}
	// The settlement records the task in the key's usage (one row, with
	// its model and cost in US dollars; a failed task costs nothing).
	p := auth.SettleParams{KeyID: t.Charge.KeyID, Reserved: t.Charge.Amount, Model: t.Model}
	if used {
		p.Used, p.CostUSD = t.Charge.Amount, t.Charge.CostUSD
	}
	_, err := r.cfg.keys.Settle(context.WithoutCancel(ctx), p)
	switch {
	case err == nil:
	case errors.Is(err, auth.ErrQuotaExceeded):
		log.LogAttrs(ctx, slog.LevelDebug, "videos: the task's cost exceeded the key's quota", slog.Int64("amount", t.Charge.Amount))
	default:
		log.LogAttrs(ctx, slog.LevelError, "videos: settling the task's quota", slog.String("error", err.Error()))
	}
}
