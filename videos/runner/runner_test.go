package runner_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// watchedStore reports every finished task (completed or failed, as the
// store returned it) and every release on channels, so that tests wait
// for the runner without sleeping.
type watchedStore struct {
	videos.TaskStore
	finished chan *videos.Task
	released chan *videos.Task
}

func newWatchedStore() *watchedStore {
	return &watchedStore{
		TaskStore: videos.NewMemoryStore(nil),
		finished:  make(chan *videos.Task, 100),
		released:  make(chan *videos.Task, 100),
	}
}

func (s *watchedStore) Update(ctx context.Context, p videos.UpdateParams) (*videos.Task, error) {
	t, err := s.TaskStore.Update(ctx, p)
	if err == nil {
		switch {
		case t.Status.Terminal():
			s.finished <- t
		case p.Release:
			s.released <- t
		}
	}
	return t, err
}

func wait[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("timed out waiting for the runner")
		panic("unreachable")
	}
}

type runnerBundle struct {
	store    *watchedStore
	contents *videos.MemoryContentStore
	runner   *runner.Runner
	runErr   chan error
}

// setupRunner starts a runner over a fresh store and returns once it runs;
// the test's cleanup shuts it down.
func setupRunner(t *testing.T, gen videos.Generator, opts ...runner.Option) *runnerBundle {
	t.Helper()
	b := &runnerBundle{store: newWatchedStore(), contents: videos.NewMemoryContentStore(nil), runErr: make(chan error, 1)}
	opts = append([]runner.Option{runner.WithPollInterval(time.Hour), runner.WithWorkerName("test")}, opts...)
	b.runner = runner.New(b.store, gen, b.contents, opts...)
	go func() { b.runErr <- b.runner.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.runner.Shutdown(ctx)
	})
	return b
}

func (b *runnerBundle) create(t *testing.T, owner string, offset time.Duration) *videos.Task {
	t.Helper()
	task := videostest.NewTask(owner, offset)
	require.NoError(t, b.store.Create(context.Background(), task))
	b.runner.Wake()
	return task
}

func okResult() *videos.Result {
	seed := int64(42)
	return &videos.Result{
		Video:     videos.Media{ContentType: "video/mp4", Data: []byte("mp4 bytes")},
		Thumbnail: &videos.Media{ContentType: "image/png", Data: []byte("png bytes")},
		Metadata:  videos.Metadata{Duration: 8, Width: 1280, Height: 720, FPS: 24, Seed: &seed},
	}
}

func TestRunnerCompletesATaskSavingProgressAndContent(t *testing.T) {
	t.Parallel()
	var (
		seen   []int
		bundle *runnerBundle
	)
	bundle = setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, task *videos.Task, progress func(int)) (*videos.Result, error) {
		require.Equal(t, videos.StatusInProgress, task.Status)
		for _, p := range []int{10, 50, 30, 90} {
			progress(p)
			got, err := bundle.store.Get(ctx, "alice", task.ID)
			require.NoError(t, err)
			seen = append(seen, got.Progress)
		}
		return okResult(), nil
	}))
	task := bundle.create(t, "alice", 0)

	done := wait(t, bundle.store.finished)
	require.Equal(t, task.ID, done.ID)
	require.Equal(t, videos.StatusCompleted, done.Status)
	require.Equal(t, 100, done.Progress)
	require.Equal(t, []int{10, 50, 50, 90}, seen, "progress saved as reported, never down")
	require.Nil(t, done.Error)
	require.True(t, done.HasThumbnail)
	require.Equal(t, 24, done.Metadata.FPS)
	require.Equal(t, int64(42), *done.Metadata.Seed)
	require.Empty(t, done.Metadata.URL, "bytes live in the content store")
	require.False(t, done.CompletedAt.IsZero())

	for v, want := range map[videos.Variant]string{videos.VariantVideo: "mp4 bytes", videos.VariantThumbnail: "png bytes"} {
		c, err := bundle.contents.Open(context.Background(), task.ID, v)
		require.NoError(t, err)
		require.Equal(t, want, string(videostest.ReadContent(t, c)))
	}
}

func TestRunnerRecordsFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantCode string
		wantMsg  string
	}{
		{"failure", &videos.Failure{Code: "content_policy_violation", Message: "The prompt was refused."}, "content_policy_violation", "The prompt was refused."},
		{"wrapped failure without code", fmt.Errorf("ctx: %w", &videos.Failure{Message: "Upstream said no."}), "generation_failed", "Upstream said no."},
		{"api error", apierrors.BadGateway("The upstream answered 503.", errors.New("dial")), "generation_failed", "The upstream answered 503."},
		{"plain error is not leaked", errors.New("open /secret/path: permission denied"), "generation_failed", "Video generation failed."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bundle := setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, _ *videos.Task, progress func(int)) (*videos.Result, error) {
				progress(20)
				return nil, tc.err
			}))
			task := bundle.create(t, "alice", 0)
			done := wait(t, bundle.store.finished)
			require.Equal(t, task.ID, done.ID)
			require.Equal(t, videos.StatusFailed, done.Status)
			require.Equal(t, &videos.TaskError{Code: tc.wantCode, Message: tc.wantMsg}, done.Error)
			require.Equal(t, 20, done.Progress)
			_, err := bundle.contents.Open(context.Background(), task.ID, videos.VariantVideo)
			require.ErrorIs(t, err, videos.ErrNoContent)
		})
	}
}

func TestRunnerSurvivesAPanickingGenerator(t *testing.T) {
	t.Parallel()
	bundle := setupRunner(t, videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
		panic("boom")
	}))
	bundle.create(t, "alice", 0)
	done := wait(t, bundle.store.finished)
	require.Equal(t, videos.StatusFailed, done.Status)
	require.Equal(t, "generation_failed", done.Error.Code)
	second := bundle.create(t, "alice", time.Second)
	require.Equal(t, second.ID, wait(t, bundle.store.finished).ID, "the runner still runs")
}

func TestRunnerTimesOutAGeneration(t *testing.T) {
	t.Parallel()
	bundle := setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, _ *videos.Task, _ func(int)) (*videos.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}), runner.WithGenerationTimeout(time.Millisecond))
	bundle.create(t, "alice", 0)
	done := wait(t, bundle.store.finished)
	require.Equal(t, videos.StatusFailed, done.Status)
	require.Equal(t, &videos.TaskError{Code: "generation_failed", Message: "Video generation timed out after 1ms."}, done.Error)
}

func TestRunnerRecordsResultURLsWithoutStoringBytes(t *testing.T) {
	t.Parallel()
	bundle := setupRunner(t, videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
		return &videos.Result{
			Video:              videos.Media{URL: "https://cdn.example.com/v.mp4"},
			Thumbnail:          &videos.Media{URL: "https://cdn.example.com/v.jpg"},
			RemixedFromVideoID: "https://cdn.example.com/v.mp4",
			Metadata:           videos.Metadata{URL: "ignored"},
		}, nil
	}))
	task := bundle.create(t, "alice", 0)
	done := wait(t, bundle.store.finished)
	require.Equal(t, videos.StatusCompleted, done.Status)
	require.Equal(t, "https://cdn.example.com/v.mp4", done.Metadata.URL)
	require.Equal(t, "https://cdn.example.com/v.jpg", done.Metadata.ThumbnailURL)
	require.Equal(t, "https://cdn.example.com/v.mp4", done.RemixedFromVideoID)
	require.True(t, done.HasThumbnail)
	_, err := bundle.contents.Open(context.Background(), task.ID, videos.VariantVideo)
	require.ErrorIs(t, err, videos.ErrNoContent)
}

func TestRunnerFailsAResultWithoutVideo(t *testing.T) {
	t.Parallel()
	bundle := setupRunner(t, videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
		return &videos.Result{}, nil
	}))
	bundle.create(t, "alice", 0)
	done := wait(t, bundle.store.finished)
	require.Equal(t, videos.StatusFailed, done.Status)
	require.Equal(t, "Video generation produced no video.", done.Error.Message)
}

func TestRunnerBoundsConcurrency(t *testing.T) {
	t.Parallel()
	const workers, tasks = 2, 7
	var running, peak atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, tasks)
	bundle := setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, _ *videos.Task, _ func(int)) (*videos.Result, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		started <- struct{}{}
		<-release
		running.Add(-1)
		return okResult(), nil
	}), runner.WithWorkers(workers))
	for i := range tasks {
		bundle.create(t, "alice", time.Duration(i)*time.Second)
	}
	for range tasks {
		wait(t, started)
		release <- struct{}{}
		// The next task may start only once this one has been recorded.
		wait(t, bundle.store.finished)
		bundle.runner.Wake()
	}
	require.EqualValues(t, workers, peak.Load())
}

func TestRunnerRunsManyTasksConcurrently(t *testing.T) {
	t.Parallel()
	bundle := setupRunner(t, videos.GeneratorFunc(func(_ context.Context, task *videos.Task, progress func(int)) (*videos.Result, error) {
		for p := 0; p <= 100; p += 25 {
			progress(p)
		}
		if task.Owner == "bob" {
			return nil, &videos.Failure{Message: "bob's fail"}
		}
		return okResult(), nil
	}), runner.WithWorkers(4))
	const n = 40
	want := map[string]videos.Status{}
	for i := range n {
		owner := []string{"alice", "bob"}[i%2]
		task := bundle.create(t, owner, time.Duration(i)*time.Millisecond)
		want[task.ID] = map[string]videos.Status{"alice": videos.StatusCompleted, "bob": videos.StatusFailed}[owner]
	}
	for range n {
		done := wait(t, bundle.store.finished)
		require.Equal(t, want[done.ID], done.Status, done.ID)
		delete(want, done.ID)
	}
	require.Empty(t, want)
}

func TestRunnerShutdownWaitsForRunningTasks(t *testing.T) {
	t.Parallel()
	started, finish := make(chan struct{}), make(chan struct{})
	bundle := setupRunner(t, videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
		close(started)
		<-finish
		return okResult(), nil
	}))
	task := bundle.create(t, "alice", 0)
	<-started
	shut := make(chan error, 1)
	go func() { shut <- bundle.runner.Shutdown(context.Background()) }()
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v while a task ran", err)
	default:
	}
	close(finish)
	require.NoError(t, wait(t, shut))
	require.NoError(t, wait(t, bundle.runErr), "Run returns nil after Shutdown")
	done := wait(t, bundle.store.finished)
	require.Equal(t, task.ID, done.ID)
	require.Equal(t, videos.StatusCompleted, done.Status)
	// It claims nothing more.
	more := videostest.NewTask("alice", time.Second)
	require.NoError(t, bundle.store.Create(context.Background(), more))
	bundle.runner.Wake()
	got, err := bundle.store.Get(context.Background(), "alice", more.ID)
	require.NoError(t, err)
	require.Equal(t, videos.StatusQueued, got.Status)
}

func TestRunnerShutdownPastItsDeadlineReleasesRunningTasks(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	bundle := setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, _ *videos.Task, progress func(int)) (*videos.Result, error) {
		progress(30)
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	task := bundle.create(t, "alice", 0)
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, bundle.runner.Shutdown(ctx), context.Canceled)
	released := wait(t, bundle.store.released)
	require.Equal(t, task.ID, released.ID)
	require.Equal(t, videos.StatusInProgress, released.Status, "not failed: another runner takes it up")
	require.Equal(t, 30, released.Progress)

	next, err := bundle.store.Claim(context.Background(), videos.ClaimParams{Worker: "other", Now: time.Now(), MaxAttempts: 1})
	require.NoError(t, err, "claimable at once, and the attempt was not spent")
	require.Equal(t, task.ID, next.ID)
}

func TestRunnerStopsWhenRunsContextEnds(t *testing.T) {
	t.Parallel()
	store := newWatchedStore()
	started := make(chan struct{})
	r := runner.New(store, videos.GeneratorFunc(func(ctx context.Context, _ *videos.Task, _ func(int)) (*videos.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}), videos.NewMemoryContentStore(nil), runner.WithPollInterval(time.Hour))
	task := videostest.NewTask("alice", 0)
	require.NoError(t, store.Create(context.Background(), task))
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- r.Run(ctx) }()
	<-started
	cancel()
	require.ErrorIs(t, wait(t, runErr), context.Canceled)
	require.Equal(t, task.ID, wait(t, store.released).ID)
	require.Error(t, r.Run(context.Background()), "a runner runs once")
}

func TestRunnerStopsGeneratingADeletedTask(t *testing.T) {
	t.Parallel()
	started, proceed, stopped := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	bundle := setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, task *videos.Task, progress func(int)) (*videos.Result, error) {
		progress(10)
		close(started)
		<-proceed
		progress(20) // the store answers ErrNotFound: the runner cancels ctx
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
		}
		stopped <- ctx.Err()
		return okResult(), nil
	}))
	task := bundle.create(t, "alice", 0)
	<-started
	require.NoError(t, bundle.store.Delete(context.Background(), "alice", task.ID))
	close(proceed)
	require.ErrorIs(t, wait(t, stopped), context.Canceled)
}

func TestRunnerRenewsTheLeaseWithProgress(t *testing.T) {
	t.Parallel()
	now := videostest.T0()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	checked := make(chan *videos.Task, 1)
	var bundle *runnerBundle
	bundle = setupRunner(t, videos.GeneratorFunc(func(ctx context.Context, task *videos.Task, progress func(int)) (*videos.Result, error) {
		advance(45 * time.Second)
		progress(50)
		got, err := bundle.store.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		checked <- got
		return okResult(), nil
	}), runner.WithClock(clock), runner.WithLease(time.Minute))
	bundle.create(t, "alice", 0)
	got := wait(t, checked)
	require.True(t, got.LeaseExpiresAt.Equal(videostest.T0().Add(45*time.Second+time.Minute)), "lease until %v", got.LeaseExpiresAt)
	require.Equal(t, videos.StatusCompleted, wait(t, bundle.store.finished).Status)
}

func TestNewPanicsOnNilDependencies(t *testing.T) {
	t.Parallel()
	gen := videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) { return okResult(), nil })
	require.PanicsWithValue(t, "runner: New: nil TaskStore", func() { runner.New(nil, gen, videos.NewMemoryContentStore(nil)) })
	require.PanicsWithValue(t, "runner: New: nil Generator", func() { runner.New(videos.NewMemoryStore(nil), nil, videos.NewMemoryContentStore(nil)) })
	require.PanicsWithValue(t, "runner: New: nil ContentStore", func() { runner.New(videos.NewMemoryStore(nil), gen, nil) })
}
