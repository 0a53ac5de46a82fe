package runner_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// errRestart is the error of a store whose database is restarting.
var errRestart = errors.New("postgres: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)")

// flakyContents is the memory content store whose first fails Puts fail
// with err.
type flakyContents struct {
	*videos.MemoryContentStore
	mu    sync.Mutex
	fails int
	err   error
	puts  int // Puts called
}

func (c *flakyContents) Put(ctx context.Context, p videos.PutParams) error {
	c.mu.Lock()
	c.puts++
	fail := c.fails > 0
	if fail {
		c.fails--
	}
	c.mu.Unlock()
	if fail {
		return c.err
	}
	return c.MemoryContentStore.Put(ctx, p)
}

// flakyTasks is a watched store whose first fails completions fail with
// errRestart.
type flakyTasks struct {
	*watchedStore
	mu    sync.Mutex
	fails int
}

func (s *flakyTasks) Update(ctx context.Context, p videos.UpdateParams) (*videos.Task, error) {
	s.mu.Lock()
	fail := p.Complete != nil && s.fails > 0
	if fail {
		s.fails--
	}
	s.mu.Unlock()
	if fail {
		return nil, errRestart
	}
	return s.watchedStore.Update(ctx, p)
}

// TestRunnerTriesAgainToStoreAFinishedVideo: a store that fails for a
// moment does not fail a video that was generated; one that keeps failing
// (or refuses the content for good) does, with a message that says so.
func TestRunnerTriesAgainToStoreAFinishedVideo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		putFails     int
		putErr       error
		completeFail int
		wantStatus   videos.Status
		wantError    *videos.TaskError
		wantPuts     int
	}{
		{name: "APutThatFailsTwice", putFails: 2, putErr: errRestart,
			wantStatus: videos.StatusCompleted, wantPuts: 2 + 2},
		{name: "APutThatFailsOnce", putFails: 1, putErr: fmt.Errorf("sqlite: %w", errRestart),
			wantStatus: videos.StatusCompleted, wantPuts: 1 + 2},
		{name: "ACompletionThatFailsOnce", completeFail: 1,
			wantStatus: videos.StatusCompleted, wantPuts: 2},
		{name: "APutThatKeepsFailing", putFails: 100, putErr: errRestart, wantStatus: videos.StatusFailed,
			wantError: &videos.TaskError{Code: videos.CodeGenerationFailed, Message: "The generated video could not be stored."}, wantPuts: 6},
		{name: "APutRefusedForGood", putFails: 100, putErr: fmt.Errorf("%w: content: bad variant", videos.ErrInvalidParams), wantStatus: videos.StatusFailed,
			wantError: &videos.TaskError{Code: videos.CodeGenerationFailed, Message: "The generated video could not be stored."}, wantPuts: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := &flakyTasks{watchedStore: newWatchedStore(), fails: tc.completeFail}
			contents := &flakyContents{MemoryContentStore: videos.NewMemoryContentStore(nil), fails: tc.putFails, err: tc.putErr}
			gen := videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) { return okResult(), nil })
			r := runner.New(store, gen, contents, runner.WithPollInterval(time.Hour), runner.WithWorkerName("test"))
			runner.SetStoreBackoff(r, time.Millisecond)
			go func() { _ = r.Run(context.Background()) }()
			t.Cleanup(func() { _ = r.Shutdown(context.Background()) })

			task := videostest.NewTask("alice", 0)
			require.NoError(t, store.Create(context.Background(), task))
			r.Wake()
			done := wait(t, store.finished)
			require.Equal(t, task.ID, done.ID)
			require.Equal(t, tc.wantStatus, done.Status)
			require.Equal(t, tc.wantError, done.Error)
			contents.mu.Lock()
			require.Equal(t, tc.wantPuts, contents.puts)
			contents.mu.Unlock()
			if tc.wantStatus == videos.StatusCompleted {
				c, err := contents.Open(context.Background(), task.ID, videos.VariantVideo)
				require.NoError(t, err)
				require.Equal(t, "mp4 bytes", string(videostest.ReadContent(t, c)))
			}
		})
	}
}
