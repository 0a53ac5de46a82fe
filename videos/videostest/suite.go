// Package videostest holds the conformance suites of the interfaces of
// package videos, for the implementations that ship with it and for those
// of embedders:
//
//	func TestMyStore(t *testing.T) {
//		videostest.TestTaskStore(t, func(t *testing.T) videos.TaskStore {
//			return newMyStore(t) // empty
//		})
//	}
//
// [TestTaskStore] checks a TaskStore, [TestContentStore] a ContentStore
// and [TestGenerator] a Generator (the video backend; [TaskFor] makes it a
// task its model accepts). The store suites pass every time explicitly
// (the Now fields of the params), so they test lease expiry without
// sleeping.
package videostest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
)

// T0 returns the time the suites start their clocks at: 2025-06-01
// 12:00 UTC.
func T0() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }

// NewTask returns a queued task with a fresh id, for owner, created at
// T0 + offset.
func NewTask(owner string, offset time.Duration) *videos.Task {
	return &videos.Task{
		ID:        videos.NewID(),
		Owner:     owner,
		Model:     "video-model",
		Status:    videos.StatusQueued,
		CreatedAt: T0().Add(offset),
		Seconds:   "8",
		Size:      "1280x720",
		Request: videos.Request{Create: &videos.CreateRequest{
			Model:   "video-model",
			Prompt:  "a lighthouse at dusk",
			Size:    "1280x720",
			Seconds: "8",
		}},
	}
}

const (
	lease = time.Minute
	tries = 3
)

func claimAt(ctx context.Context, t *testing.T, s videos.TaskStore, worker string, at time.Time) (*videos.Task, error) {
	t.Helper()
	return s.Claim(ctx, videos.ClaimParams{Worker: worker, Now: at, Lease: lease, MaxAttempts: tries})
}

func mustCreate(ctx context.Context, t *testing.T, s videos.TaskStore, tasks ...*videos.Task) {
	t.Helper()
	for _, task := range tasks {
		require.NoError(t, s.Create(ctx, task))
	}
}

// TestTaskStore checks the [videos.TaskStore] contract. newStore is called
// once per subtest and must return an empty store; subtests run in
// parallel.
func TestTaskStore(t *testing.T, newStore func(t *testing.T) videos.TaskStore) {
	ctx := context.Background()
	setup := func(t *testing.T) videos.TaskStore {
		t.Helper()
		t.Parallel()
		return newStore(t)
	}

	t.Run("CreateThenGetReturnsTheTask", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		seed := int64(7)
		task.Metadata.Seed = &seed
		mustCreate(ctx, t, s, task)
		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, task.ID, got.ID)
		require.Equal(t, videos.StatusQueued, got.Status)
		require.Zero(t, got.Progress)
		require.True(t, task.CreatedAt.Equal(got.CreatedAt))
		require.Equal(t, "8", got.Seconds)
		require.Equal(t, "1280x720", got.Size)
		require.Equal(t, "a lighthouse at dusk", got.Prompt())
		require.NotNil(t, got.Metadata.Seed)
		require.Equal(t, seed, *got.Metadata.Seed)
	})

	t.Run("BackendRefIsKeptThroughEveryMethod", func(t *testing.T) {
		// A Submitter's reference (an upstream task id) must survive a
		// restart: a runner that claims the task later finds the work
		// by it instead of starting it again.
		s := setup(t)
		task := NewTask("alice", 0)
		task.BackendRef = `{"upstream":"up-1","id":"video_123"}`
		mustCreate(ctx, t, s, task)
		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, task.BackendRef, got.BackendRef)
		claimed, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		require.Equal(t, task.BackendRef, claimed.BackendRef)
		updated, err := s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: claimed.Attempts, Now: T0(), Progress: 40})
		require.NoError(t, err)
		require.Equal(t, task.BackendRef, updated.BackendRef)
		list, _, err := s.List(ctx, videos.ListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, task.BackendRef, list[0].BackendRef)
		// A run-out lease hands the task to another worker with its
		// reference.
		again, err := claimAt(ctx, t, s, "w2", T0().Add(2*lease))
		require.NoError(t, err)
		require.Equal(t, task.ID, again.ID)
		require.Equal(t, task.BackendRef, again.BackendRef)
	})

	t.Run("CreateRefusesADuplicateID", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		require.ErrorIs(t, s.Create(ctx, task), videos.ErrExists)
	})

	t.Run("CreateRefusesATaskThatIsNotQueued", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		task.Status = videos.StatusCompleted
		require.ErrorIs(t, s.Create(ctx, task), videos.ErrInvalidParams)
	})

	t.Run("GetReturnsErrNotFoundIfTaskDoesNotExist", func(t *testing.T) {
		s := setup(t)
		_, err := s.Get(ctx, "alice", videos.NewID())
		require.ErrorIs(t, err, videos.ErrNotFound)
	})

	t.Run("GetReturnsErrNotFoundForAnotherOwnersTask", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		_, err := s.Get(ctx, "bob", task.ID)
		require.ErrorIs(t, err, videos.ErrNotFound)
	})

	t.Run("TasksGoInAndOutAsCopies", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		task.Model = "changed after Create"
		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, "video-model", got.Model)
		got.Progress = 99
		got.Error = &videos.TaskError{Code: "x"}
		again, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Zero(t, again.Progress)
		require.Nil(t, again.Error)
	})

	t.Run("KeepsTheChargeOfATaskThroughItsLife", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		task.Charge = &videos.TaskCharge{KeyID: "key_1", Amount: 8000}
		free := NewTask("alice", time.Second)
		mustCreate(ctx, t, s, task, free)
		task.Charge.Amount = 1 // the store holds a copy
		want := &videos.TaskCharge{KeyID: "key_1", Amount: 8000}

		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, want, got.Charge)
		got.Charge.Amount = 2 // and hands out copies
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		require.Equal(t, task.ID, c.ID)
		require.Equal(t, want, c.Charge, "the claimed task carries the charge to the runner")
		done, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(),
			Complete: &videos.Completion{Seconds: "8"}})
		require.NoError(t, err)
		require.Equal(t, want, done.Charge)
		listed, _, err := s.List(ctx, videos.ListParams{Owner: "alice", Order: videos.OrderAsc})
		require.NoError(t, err)
		require.Len(t, listed, 2)
		require.Equal(t, want, listed[0].Charge)
		require.Nil(t, listed[1].Charge, "a task without a charge has none")
	})

	t.Run("ClaimReturnsErrNoTaskWhenNothingIsQueued", func(t *testing.T) {
		s := setup(t)
		_, err := claimAt(ctx, t, s, "w1", T0())
		require.ErrorIs(t, err, videos.ErrNoTask)
	})

	t.Run("ClaimHandsOutTheOldestQueuedTaskFirst", func(t *testing.T) {
		s := setup(t)
		newer, older := NewTask("alice", 2*time.Second), NewTask("bob", time.Second)
		mustCreate(ctx, t, s, newer, older)
		now := T0().Add(time.Hour)
		got, err := claimAt(ctx, t, s, "w1", now)
		require.NoError(t, err)
		require.Equal(t, older.ID, got.ID)
		require.Equal(t, videos.StatusInProgress, got.Status)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, "w1", got.Worker)
		require.True(t, got.LeaseExpiresAt.Equal(now.Add(lease)), "lease until %v", got.LeaseExpiresAt)
		stored, err := s.Get(ctx, "bob", older.ID)
		require.NoError(t, err)
		require.Equal(t, videos.StatusInProgress, stored.Status)

		got, err = claimAt(ctx, t, s, "w2", now)
		require.NoError(t, err)
		require.Equal(t, newer.ID, got.ID)
		_, err = claimAt(ctx, t, s, "w3", now)
		require.ErrorIs(t, err, videos.ErrNoTask)
	})

	t.Run("ConcurrentClaimersNeverGetTheSameTask", func(t *testing.T) {
		s := setup(t)
		const n, workers = 60, 8
		for i := range n {
			mustCreate(ctx, t, s, NewTask(fmt.Sprint("owner", i%3), time.Duration(i)*time.Millisecond))
		}
		var (
			mu      sync.Mutex
			claimed = map[string]string{}
			wg      sync.WaitGroup
			errs    = make(chan error, workers)
		)
		for w := range workers {
			wg.Go(func() {
				worker := fmt.Sprint("w", w)
				for {
					task, err := claimAt(ctx, t, s, worker, T0().Add(time.Second))
					if err != nil {
						if !isNoTask(err) {
							errs <- err
						}
						return
					}
					mu.Lock()
					if prev, dup := claimed[task.ID]; dup {
						errs <- fmt.Errorf("task %s claimed by %s and %s", task.ID, prev, worker)
					}
					claimed[task.ID] = worker
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, claimed, n)
	})

	t.Run("ProgressNeverDecreases", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		for _, step := range []struct{ send, want int }{{30, 30}, {10, 30}, {0, 30}, {55, 55}, {100, 100}, {99, 100}} {
			got, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: step.send})
			require.NoError(t, err)
			require.Equal(t, step.want, got.Progress, "after sending %d", step.send)
			require.Equal(t, videos.StatusInProgress, got.Status)
		}
	})

	t.Run("ProgressOutside0To100IsRefused", func(t *testing.T) {
		s := setup(t)
		mustCreate(ctx, t, s, NewTask("alice", 0))
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		for _, p := range []int{-1, 101, 1000} {
			_, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: p})
			require.ErrorIs(t, err, videos.ErrInvalidParams, "progress %d", p)
		}
		got, err := s.Get(ctx, "alice", c.ID)
		require.NoError(t, err)
		require.Zero(t, got.Progress)
	})

	t.Run("ConcurrentUpdatesKeepProgressMonotonic", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		observed := make(chan error, 1)
		go func() { // a poller: progress must never go down
			last := 0
			for {
				select {
				case <-stop:
					observed <- nil
					return
				default:
				}
				got, err := s.Get(ctx, "alice", task.ID)
				if err != nil {
					observed <- err
					return
				}
				if got.Progress < last || got.Progress > 100 {
					observed <- fmt.Errorf("progress went from %d to %d", last, got.Progress)
					return
				}
				last = got.Progress
			}
		}()
		for g := range 4 {
			wg.Go(func() {
				for i := range 100 {
					p := (i*7 + g*13) % 101
					_, _ = s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: p})
				}
			})
		}
		wg.Wait()
		close(stop)
		require.NoError(t, <-observed)
		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, 100, got.Progress)
	})

	t.Run("CompleteSetsProgressCompletedAtAndMetadata", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		task.Seconds, task.Size = "", ""
		mustCreate(ctx, t, s, task)
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		done := T0().Add(5 * time.Second)
		got, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: done, Progress: 40,
			Complete: &videos.Completion{
				Metadata:     videos.Metadata{Duration: 4, Width: 640, Height: 360, FPS: 24},
				HasThumbnail: true,
				Seconds:      "4",
				Size:         "640x360",
			}})
		require.NoError(t, err)
		require.Equal(t, videos.StatusCompleted, got.Status)
		require.Equal(t, 100, got.Progress)
		require.True(t, got.CompletedAt.Equal(done))
		require.Nil(t, got.Error)
		require.True(t, got.HasThumbnail)
		require.Equal(t, 640, got.Metadata.Width)
		require.Equal(t, "4", got.Seconds, "filled in from the completion when the task had none")
		require.Equal(t, "640x360", got.Size)
		stored, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, got.Status, stored.Status)
		require.Equal(t, 24, stored.Metadata.FPS)
	})

	t.Run("CompletionKeepsTheRequestedSecondsAndSize", func(t *testing.T) {
		s := setup(t)
		mustCreate(ctx, t, s, NewTask("alice", 0))
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		got, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(),
			Complete: &videos.Completion{Seconds: "4", Size: "640x360"}})
		require.NoError(t, err)
		require.Equal(t, "8", got.Seconds)
		require.Equal(t, "1280x720", got.Size)
	})

	for _, outcome := range []string{"Completed", "Failed"} {
		t.Run(outcome+"IsFinal", func(t *testing.T) {
			s := setup(t)
			task := NewTask("alice", 0)
			mustCreate(ctx, t, s, task)
			c, err := claimAt(ctx, t, s, "w1", T0())
			require.NoError(t, err)
			finish := videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0()}
			if outcome == "Completed" {
				finish.Complete = &videos.Completion{}
			} else {
				finish.Progress = 20
				finish.Fail = &videos.TaskError{Code: videos.CodeGenerationFailed, Message: "boom"}
			}
			before, err := s.Update(ctx, finish)
			require.NoError(t, err)
			for name, p := range map[string]videos.UpdateParams{
				"progress": {ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: 50},
				"complete": {ID: c.ID, Attempt: c.Attempts, Now: T0(), Complete: &videos.Completion{}},
				"fail":     {ID: c.ID, Attempt: c.Attempts, Now: T0(), Fail: &videos.TaskError{Code: "x", Message: "y"}},
				"release":  {ID: c.ID, Attempt: c.Attempts, Now: T0(), Release: true},
			} {
				_, err := s.Update(ctx, p)
				require.ErrorIs(t, err, videos.ErrFinished, name)
			}
			// Not even a run-out lease reopens it.
			_, err = claimAt(ctx, t, s, "w2", T0().Add(24*time.Hour))
			require.ErrorIs(t, err, videos.ErrNoTask)
			after, err := s.Get(ctx, "alice", task.ID)
			require.NoError(t, err)
			require.Equal(t, before.Status, after.Status)
			require.Equal(t, before.Progress, after.Progress)
			require.Equal(t, before.Error, after.Error)
		})
	}

	t.Run("FailRecordsTheErrorAndKeepsProgress", func(t *testing.T) {
		s := setup(t)
		mustCreate(ctx, t, s, NewTask("alice", 0))
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		_, err = s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: 35})
		require.NoError(t, err)
		got, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0().Add(time.Second),
			Fail: &videos.TaskError{Code: "content_policy", Message: "no"}})
		require.NoError(t, err)
		require.Equal(t, videos.StatusFailed, got.Status)
		require.Equal(t, &videos.TaskError{Code: "content_policy", Message: "no"}, got.Error)
		require.Equal(t, 35, got.Progress)
		require.True(t, got.CompletedAt.Equal(T0().Add(time.Second)))
	})

	t.Run("UpdateRefusesTwoOutcomesAtOnce", func(t *testing.T) {
		s := setup(t)
		mustCreate(ctx, t, s, NewTask("alice", 0))
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		_, err = s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(),
			Complete: &videos.Completion{}, Fail: &videos.TaskError{Code: "x", Message: "y"}})
		require.ErrorIs(t, err, videos.ErrInvalidParams)
	})

	t.Run("UpdateOfAnUnclaimedTaskReturnsErrLeaseLost", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		_, err := s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: 0, Now: T0(), Progress: 10})
		require.ErrorIs(t, err, videos.ErrLeaseLost)
	})

	t.Run("UpdateReturnsErrNotFoundIfTaskDoesNotExist", func(t *testing.T) {
		s := setup(t)
		_, err := s.Update(ctx, videos.UpdateParams{ID: videos.NewID(), Attempt: 1, Now: T0(), Progress: 10})
		require.ErrorIs(t, err, videos.ErrNotFound)
	})

	t.Run("UnrenewedLeaseRunsOutAndTheTaskIsRetried", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		first, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		_, err = s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: first.Attempts, Now: T0(), Progress: 40})
		require.NoError(t, err)

		_, err = claimAt(ctx, t, s, "w2", T0().Add(lease-time.Second))
		require.ErrorIs(t, err, videos.ErrNoTask, "the lease still holds")

		second, err := claimAt(ctx, t, s, "w2", T0().Add(lease))
		require.NoError(t, err, "the lease ran out")
		require.Equal(t, task.ID, second.ID)
		require.Equal(t, 2, second.Attempts)
		require.Equal(t, "w2", second.Worker)
		require.Equal(t, videos.StatusInProgress, second.Status)
		require.Equal(t, 40, second.Progress, "progress is kept across attempts")

		_, err = s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: first.Attempts, Now: T0().Add(lease), Progress: 90})
		require.ErrorIs(t, err, videos.ErrLeaseLost, "the first worker lost the task")
		got, err := s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: second.Attempts, Now: T0().Add(lease), Progress: 50})
		require.NoError(t, err)
		require.Equal(t, 50, got.Progress)
	})

	t.Run("RetriedTasksComeBeforeQueuedOnes", func(t *testing.T) {
		s := setup(t)
		old, young := NewTask("alice", 0), NewTask("alice", time.Second)
		mustCreate(ctx, t, s, old)
		_, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		mustCreate(ctx, t, s, young)
		got, err := claimAt(ctx, t, s, "w2", T0().Add(2*lease))
		require.NoError(t, err)
		require.Equal(t, old.ID, got.ID)
	})

	t.Run("RenewingTheLeaseKeepsTheTask", func(t *testing.T) {
		s := setup(t)
		mustCreate(ctx, t, s, NewTask("alice", 0))
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		renewed, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0().Add(50 * time.Second), Lease: lease})
		require.NoError(t, err)
		require.True(t, renewed.LeaseExpiresAt.Equal(T0().Add(50*time.Second+lease)))
		_, err = claimAt(ctx, t, s, "w2", T0().Add(lease+10*time.Second))
		require.ErrorIs(t, err, videos.ErrNoTask)
	})

	t.Run("ALateUpdateSucceedsIfNobodyClaimedTheTaskSince", func(t *testing.T) {
		s := setup(t)
		mustCreate(ctx, t, s, NewTask("alice", 0))
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		got, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0().Add(3 * lease), Lease: lease, Progress: 60})
		require.NoError(t, err)
		require.Equal(t, 60, got.Progress)
		_, err = claimAt(ctx, t, s, "w2", T0().Add(3*lease+time.Second))
		require.ErrorIs(t, err, videos.ErrNoTask, "the late update renewed the lease")
	})

	t.Run("ATaskWhoseLeaseRunsOutMaxAttemptsTimesFails", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		now := T0()
		for attempt := 1; attempt <= tries; attempt++ {
			c, err := claimAt(ctx, t, s, fmt.Sprint("w", attempt), now)
			require.NoError(t, err, "attempt %d", attempt)
			require.Equal(t, attempt, c.Attempts)
			now = now.Add(lease)
		}
		_, err := claimAt(ctx, t, s, "w9", now)
		require.ErrorIs(t, err, videos.ErrNoTask)
		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, videos.StatusFailed, got.Status)
		require.NotNil(t, got.Error)
		require.Equal(t, videos.CodeGenerationFailed, got.Error.Code)
		require.Contains(t, got.Error.Message, "stopped responding")
		require.True(t, got.CompletedAt.Equal(now))
		_, err = s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: tries, Now: now, Progress: 99})
		require.ErrorIs(t, err, videos.ErrFinished)
	})

	t.Run("AReleasedTaskIsClaimableAtOnceWithoutSpendingAnAttempt", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		var last *videos.Task
		for i := range tries + 2 {
			c, err := claimAt(ctx, t, s, fmt.Sprint("w", i), T0())
			require.NoError(t, err, "claim %d", i)
			require.Equal(t, task.ID, c.ID)
			got, err := s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: 10 * (i + 1), Release: true})
			require.NoError(t, err)
			require.Equal(t, videos.StatusInProgress, got.Status)
			require.Empty(t, got.Worker)
			last = c
		}
		_, err := s.Update(ctx, videos.UpdateParams{ID: task.ID, Attempt: last.Attempts - 1, Now: T0(), Progress: 90})
		require.ErrorIs(t, err, videos.ErrLeaseLost, "an earlier holder")
		got, err := s.Get(ctx, "alice", task.ID)
		require.NoError(t, err)
		require.Equal(t, videos.StatusInProgress, got.Status)
		require.Equal(t, 10*(tries+2), got.Progress)
	})

	t.Run("ListReturnsTheOwnersTasksNewestFirstInPages", func(t *testing.T) {
		s := setup(t)
		var ids []string // oldest first
		for i := range 5 {
			task := NewTask("alice", time.Duration(i)*time.Second)
			ids = append(ids, task.ID)
			mustCreate(ctx, t, s, task)
		}
		mustCreate(ctx, t, s, NewTask("bob", 10*time.Second), NewTask("bob", -time.Second))

		page := func(p videos.ListParams) ([]string, bool) {
			t.Helper()
			p.Owner = "alice"
			tasks, more, err := s.List(ctx, p)
			require.NoError(t, err)
			out := make([]string, len(tasks))
			for i, task := range tasks {
				require.Equal(t, "alice", task.Owner)
				out[i] = task.ID
			}
			return out, more
		}
		got, more := page(videos.ListParams{Limit: 2})
		require.Equal(t, []string{ids[4], ids[3]}, got)
		require.True(t, more)
		got, more = page(videos.ListParams{Limit: 2, After: ids[3]})
		require.Equal(t, []string{ids[2], ids[1]}, got)
		require.True(t, more)
		got, more = page(videos.ListParams{Limit: 2, After: ids[1]})
		require.Equal(t, []string{ids[0]}, got)
		require.False(t, more)
		got, more = page(videos.ListParams{Limit: 2, After: ids[0]})
		require.Empty(t, got)
		require.False(t, more)

		got, more = page(videos.ListParams{})
		want := slices.Clone(ids)
		slices.Reverse(want)
		require.Equal(t, want, got)
		require.False(t, more)

		got, more = page(videos.ListParams{Order: videos.OrderAsc, Limit: 3, After: ids[0]})
		require.Equal(t, ids[1:4], got)
		require.True(t, more)
	})

	t.Run("ListAfterAnotherOwnersTaskReturnsErrNotFound", func(t *testing.T) {
		s := setup(t)
		bobs := NewTask("bob", 0)
		mustCreate(ctx, t, s, bobs, NewTask("alice", 0))
		_, _, err := s.List(ctx, videos.ListParams{Owner: "alice", After: bobs.ID})
		require.ErrorIs(t, err, videos.ErrNotFound)
		_, _, err = s.List(ctx, videos.ListParams{Owner: "alice", After: videos.NewID()})
		require.ErrorIs(t, err, videos.ErrNotFound)
	})

	t.Run("ListOfAnOwnerWithoutTasksIsEmpty", func(t *testing.T) {
		s := setup(t)
		tasks, more, err := s.List(ctx, videos.ListParams{Owner: "nobody", Limit: 10})
		require.NoError(t, err)
		require.Empty(t, tasks)
		require.False(t, more)
	})

	t.Run("DeleteRemovesTheTask", func(t *testing.T) {
		s := setup(t)
		task, other := NewTask("alice", 0), NewTask("alice", time.Second)
		mustCreate(ctx, t, s, task, other)
		require.ErrorIs(t, s.Delete(ctx, "bob", task.ID), videos.ErrNotFound, "another owner's")
		require.NoError(t, s.Delete(ctx, "alice", task.ID))
		_, err := s.Get(ctx, "alice", task.ID)
		require.ErrorIs(t, err, videos.ErrNotFound)
		require.ErrorIs(t, s.Delete(ctx, "alice", task.ID), videos.ErrNotFound, "twice")
		tasks, _, err := s.List(ctx, videos.ListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, tasks, 1)
		require.Equal(t, other.ID, tasks[0].ID)
		// The deleted task, queued, is never claimed.
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		require.Equal(t, other.ID, c.ID)
		_, err = claimAt(ctx, t, s, "w1", T0())
		require.ErrorIs(t, err, videos.ErrNoTask)
	})

	t.Run("DeletingARunningTaskStopsItsWorker", func(t *testing.T) {
		s := setup(t)
		task := NewTask("alice", 0)
		mustCreate(ctx, t, s, task)
		c, err := claimAt(ctx, t, s, "w1", T0())
		require.NoError(t, err)
		require.NoError(t, s.Delete(ctx, "alice", task.ID))
		_, err = s.Update(ctx, videos.UpdateParams{ID: c.ID, Attempt: c.Attempts, Now: T0(), Progress: 50})
		require.ErrorIs(t, err, videos.ErrNotFound)
		_, err = claimAt(ctx, t, s, "w2", T0().Add(10*lease))
		require.ErrorIs(t, err, videos.ErrNoTask)
	})
}

func isNoTask(err error) bool { return errors.Is(err, videos.ErrNoTask) }
