package videos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Errors that are part of the [TaskStore] contract. Implementations may
// wrap them; compare with errors.Is.
var (
	// ErrNotFound: no task with that id, or it belongs to another owner.
	ErrNotFound = errors.New("videos: task not found")
	// ErrExists: Create was given an id that is already stored.
	ErrExists = errors.New("videos: task already exists")
	// ErrNoTask: Claim found nothing to hand out.
	ErrNoTask = errors.New("videos: no task to claim")
	// ErrLeaseLost: an Update came from a worker that no longer holds the
	// task's lease (another worker has claimed it since, or it was never
	// claimed).
	ErrLeaseLost = errors.New("videos: lease lost")
	// ErrFinished: an Update was made to a completed or failed task.
	ErrFinished = errors.New("videos: task already finished")
	// ErrInvalidParams: the parameters break the contract (progress
	// outside 0–100, two outcomes at once, no worker name…).
	ErrInvalidParams = errors.New("videos: invalid parameters")
)

// Defaults of the lease policy, used when [ClaimParams] leaves them zero.
const (
	DefaultLease       = time.Minute
	DefaultMaxAttempts = 3
)

// A TaskStore persists video tasks. Implementations must be safe for
// concurrent use, and must hand out and take in copies: changing a *Task
// passed to Create or returned by a method never changes the store (the
// Request, immutable, may be shared). The conformance suite
// videostest.TestTaskStore checks this contract.
//
// Times come from the callers (the Now fields), never from the store's
// clock, so the lease policy can be tested without sleeping. A zero Now
// means time.Now().
//
// # Lease policy
//
// [TaskStore.Claim] hands a task to a worker together with a lease that
// lasts ClaimParams.Lease. The worker renews it with every Update that
// sets UpdateParams.Lease (the runner (package videos/runner) does so at every progress report
// and at a third of the lease in between). The worker is identified by
// the Attempts number that its claim gave the task: once another claim
// has bumped it, the old worker's updates fail with [ErrLeaseLost].
//
// When a lease runs out, the task stays in_progress until the next Claim
// (by any worker) sees it:
//
//   - if it has been claimed fewer than ClaimParams.MaxAttempts times,
//     that Claim hands it out again (before any queued task), with its
//     progress kept;
//   - otherwise that Claim fails it, with code generation_failed and a
//     message saying the worker stopped responding, and moves on.
//
// A worker that stops on purpose (shutdown) releases its lease with
// UpdateParams.Release: the task is claimable at once, and that attempt is
// not counted against MaxAttempts. An update from a worker whose lease has
// run out still succeeds as long as no Claim has taken or failed the task
// since.
type TaskStore interface {
	// Create stores a new task. t.ID, t.Owner and t.CreatedAt must be set
	// and t.Status must be queued, else an error wrapping
	// ErrInvalidParams; an id already stored gives ErrExists.
	Create(ctx context.Context, t *Task) error

	// Get returns the task with the given id if it belongs to owner, and
	// an error wrapping ErrNotFound otherwise.
	Get(ctx context.Context, owner, id string) (*Task, error)

	// Claim gives the worker p.Worker the oldest claimable task (by
	// CreatedAt): first an in_progress task whose lease has run out (see
	// the lease policy), then a queued one. The task becomes in_progress,
	// Attempts grows by one, Worker is p.Worker and LeaseExpiresAt is
	// p.Now + p.Lease. Claim returns an error wrapping ErrNoTask when
	// there is nothing to claim. Two concurrent Claims never return the
	// same task.
	Claim(ctx context.Context, p ClaimParams) (*Task, error)

	// Update applies a worker's change to the task it holds and returns
	// the task afterwards. Errors, in this order: ErrNotFound (deleted),
	// ErrFinished (completed or failed), ErrLeaseLost (p.Attempt is not
	// the task's Attempts, or the task is not in_progress),
	// ErrInvalidParams. Progress never decreases: a lower p.Progress is
	// ignored (so 0 leaves it as it is).
	Update(ctx context.Context, p UpdateParams) (*Task, error)

	// List returns owner's tasks ordered by CreatedAt (ties broken by id),
	// newest first unless p.Order is OrderAsc, starting after the task
	// p.After (which must be owner's, else ErrNotFound), at most p.Limit
	// of them (no limit if ≤ 0), and whether more follow.
	List(ctx context.Context, p ListParams) (tasks []*Task, hasMore bool, err error)

	// Delete removes owner's task in whatever state it is, or returns an
	// error wrapping ErrNotFound. The worker running it gets ErrNotFound
	// at its next Update.
	Delete(ctx context.Context, owner, id string) error
}

// ClaimParams are the parameters of [TaskStore.Claim].
type ClaimParams struct {
	// Worker names the claiming worker (for logs and the Task's Worker
	// field); required.
	Worker string
	// Now is the current time; zero means time.Now().
	Now time.Time
	// Lease is how long the claim lasts without renewal; zero means
	// DefaultLease.
	Lease time.Duration
	// MaxAttempts is how many times a task may be claimed before a run
	// out lease fails it; zero means DefaultMaxAttempts.
	MaxAttempts int
}

// UpdateParams are the parameters of [TaskStore.Update]. At most one of
// Complete, Fail and Release may be set; with none, the update reports
// progress and may renew the lease.
type UpdateParams struct {
	// ID is the task's id.
	ID string
	// Attempt is the Attempts value of the task the worker claimed.
	Attempt int
	// Now is the current time; zero means time.Now().
	Now time.Time
	// Lease, when positive, renews the lease until Now + Lease.
	Lease time.Duration
	// Progress is the new progress, 0 to 100 (ErrInvalidParams outside);
	// values below the stored one are ignored.
	Progress int

	// Complete finishes the task as completed: progress 100, CompletedAt
	// Now, and the fields of the completion.
	Complete *Completion
	// Fail finishes the task as failed with this error, CompletedAt Now.
	Fail *TaskError
	// Release gives the task up: it stays in_progress with its progress,
	// and is claimable at once without counting the attempt.
	Release bool
}

// Completion is what a completed task records.
type Completion struct {
	// Metadata is stored as the task's metadata.
	Metadata Metadata
	// HasThumbnail records that a thumbnail is available.
	HasThumbnail bool
	// ExpiresAt, RemixedFromVideoID: stored when non-zero.
	ExpiresAt          time.Time
	RemixedFromVideoID string
	// Seconds and Size replace the task's when it has none.
	Seconds string
	Size    string
}

// Order is the order of [TaskStore.List].
type Order string

// The orders of a list.
const (
	OrderDesc Order = "desc" // newest first; the default
	OrderAsc  Order = "asc"  // oldest first
)

// ListParams are the parameters of [TaskStore.List].
type ListParams struct {
	// Owner whose tasks are listed.
	Owner string
	// After is the id of the task the page starts after; empty for the
	// first page.
	After string
	// Limit is the most tasks returned; ≤ 0 means all.
	Limit int
	// Order is OrderDesc (also when empty) or OrderAsc.
	Order Order
}

// ApplyUpdate applies p to t, a copy of the stored task, following the
// [TaskStore.Update] contract, and reports the contract's errors (all but
// ErrNotFound). Store implementations that keep whole tasks can use it
// inside their read-modify-write transaction, so that they agree with the
// in-memory store.
func ApplyUpdate(t *Task, p UpdateParams) error {
	switch {
	case t.Status.Terminal():
		return ErrFinished
	case t.Status != StatusInProgress || t.Attempts != p.Attempt:
		return ErrLeaseLost
	case p.Progress < 0 || p.Progress > 100:
		return errorf(ErrInvalidParams, "progress %d is outside 0–100", p.Progress)
	case btoi(p.Complete != nil)+btoi(p.Fail != nil)+btoi(p.Release) > 1:
		return errorf(ErrInvalidParams, "at most one of Complete, Fail and Release may be set")
	}
	now := nowOr(p.Now)
	t.Progress = max(t.Progress, p.Progress)
	if p.Lease > 0 {
		t.LeaseExpiresAt = now.Add(p.Lease)
	}
	switch {
	case p.Complete != nil:
		c := p.Complete
		t.Status = StatusCompleted
		t.Progress = 100
		t.CompletedAt = now
		t.Metadata = c.Metadata
		if c.Metadata.Seed != nil {
			s := *c.Metadata.Seed
			t.Metadata.Seed = &s
		}
		t.HasThumbnail = c.HasThumbnail
		if !c.ExpiresAt.IsZero() {
			t.ExpiresAt = c.ExpiresAt
		}
		if c.RemixedFromVideoID != "" {
			t.RemixedFromVideoID = c.RemixedFromVideoID
		}
		if t.Seconds == "" {
			t.Seconds = c.Seconds
		}
		if t.Size == "" {
			t.Size = c.Size
		}
		t.Worker, t.LeaseExpiresAt = "", time.Time{}
	case p.Fail != nil:
		e := *p.Fail
		t.Status = StatusFailed
		t.Error = &e
		t.CompletedAt = now
		t.Worker, t.LeaseExpiresAt = "", time.Time{}
	case p.Release:
		t.Worker, t.LeaseExpiresAt = "", now
	}
	return nil
}

// leaseExpired reports whether t is in_progress with a lease that has run
// out at now (a released task's has).
func leaseExpired(t *Task, now time.Time) bool {
	return t.Status == StatusInProgress && !now.Before(t.LeaseExpiresAt)
}

// expireLease applies the lease policy to t, in_progress with a lease that
// has run out at now: it returns true if t may be claimed again, or fails
// t (and returns false) when it has been claimed maxAttempts times
// already. A released task (no Worker) may always be claimed again.
func expireLease(t *Task, now time.Time, maxAttempts int) (retry bool) {
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	if t.Worker == "" || t.Attempts < maxAttempts {
		return true
	}
	t.Status = StatusFailed
	t.Error = &TaskError{
		Code:    CodeGenerationFailed,
		Message: leaseMessage(t.Attempts),
	}
	t.CompletedAt = now
	t.Worker, t.LeaseExpiresAt = "", time.Time{}
	return false
}

func leaseMessage(attempts int) string {
	if attempts == 1 {
		return "Video generation did not finish: the worker running it stopped responding."
	}
	return "Video generation did not finish: the workers running it stopped responding " + itoa(attempts) + " times."
}

// claimTask marks t, queued or with a run-out lease, as claimed by p.
func claimTask(t *Task, p ClaimParams) {
	lease := p.Lease
	if lease <= 0 {
		lease = DefaultLease
	}
	t.Status = StatusInProgress
	t.Attempts++
	t.Worker = p.Worker
	t.LeaseExpiresAt = nowOr(p.Now).Add(lease)
}

func nowOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

func itoa(i int) string { return strconv.Itoa(i) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
