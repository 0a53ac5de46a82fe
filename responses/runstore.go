package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The statuses of a background response that a foreground one never has:
// queued until a worker starts it, cancelled once
// POST /v1/responses/{id}/cancel stopped it.
const (
	StatusQueued    Status = "queued"
	StatusCancelled Status = "cancelled"
)

// Errors that are part of the [RunStore] contract. Implementations may
// wrap them; compare with errors.Is. A run that is not found is
// [ErrNotFound].
var (
	// ErrNoRun: ClaimRun found nothing to hand out.
	ErrNoRun = errors.New("responses: no run to claim")
	// ErrRunExists: CreateRun was given an id that is already stored.
	ErrRunExists = errors.New("responses: run already exists")
	// ErrLeaseLost: an update or an append came from a worker that no
	// longer holds the run (another claim has taken or failed it since).
	ErrLeaseLost = errors.New("responses: run lease lost")
	// ErrRunEnded: the run has ended (its final response is recorded),
	// or CancelRun was asked to cancel a run that completed, failed or
	// is incomplete.
	ErrRunEnded = errors.New("responses: run already ended")
	// ErrRunCancelled: UpdateRun renewed the lease of a run that was
	// cancelled meanwhile: its worker stops, records what it has and
	// ends the run with UpdateRun's Finish.
	ErrRunCancelled = errors.New("responses: run cancelled")
	// ErrEventsDropped: Events was asked for events older than the
	// oldest the bounded log still holds.
	ErrEventsDropped = errors.New("responses: events no longer kept")
)

// Defaults of the run lease policy, used when [RunClaim] leaves them zero.
const (
	DefaultRunLease       = 30 * time.Second
	DefaultRunMaxAttempts = 3
	// MaxRunEvents bounds the event log of one streamed background run:
	// once it holds this many events, appending more drops the oldest
	// (a resume from before them is a 400).
	MaxRunEvents = 10000
)

// Run is a background response on its way (see [RunStore]): its request,
// the response as it stands, the quota it reserved and its lease.
type Run struct {
	ID        string    `json:"id"`
	Owner     string    `json:"owner"`
	CreatedAt time.Time `json:"created_at"`
	// Request is the body of POST /v1/responses as the client sent it.
	Request json.RawMessage `json:"request"`
	// Response is the response as it stands: its Status is the run's
	// (queued, in_progress, cancelled, or a final one).
	Response Response `json:"response"`
	// Stream: the run's events are logged for GET ?stream=true.
	Stream bool `json:"stream,omitempty"`
	// Charge is the quota reserved at create, settled when the run ends.
	Charge *RunCharge `json:"charge,omitempty"`
	// Prompt is the estimate of the prompt's tokens, charged with the
	// output written when the backend reports no usage.
	Prompt int64 `json:"prompt,omitempty"`

	// Done: the run has ended and its final response is recorded.
	Done    bool      `json:"done,omitempty"`
	EndedAt time.Time `json:"ended_at,omitzero"`

	// Attempts is how many times the run was claimed (or failed by a
	// claim); a worker is known by it.
	Attempts       int       `json:"attempts,omitempty"`
	Worker         string    `json:"worker,omitempty"`
	LeaseExpiresAt time.Time `json:"lease_expires_at,omitzero"`
	// Events is how many events were ever logged: the next one's
	// sequence number.
	Events int `json:"events,omitempty"`
}

// Status returns the run's status, that of its response.
func (r *Run) Status() Status { return r.Response.Status }

// RunCharge is the quota reserved for a run: the key, the amount and the
// model whose pricing gives the cost.
type RunCharge struct {
	KeyID  string `json:"key_id"`
	Amount int64  `json:"amount"`
	Model  string `json:"model"`
}

// Event is one logged event of a streamed run: its sequence number, its
// type and its data (the JSON sent, which carries both).
type Event struct {
	Seq  int    `json:"seq"`
	Type string `json:"type"`
	Data []byte `json:"data"`
}

// RunClaim are the parameters of [RunStore.ClaimRun].
type RunClaim struct {
	Worker      string
	Now         time.Time // zero: time.Now()
	Lease       time.Duration
	MaxAttempts int
}

// RunUpdate are the parameters of [RunStore.UpdateRun]: with Finish
// nil, a lease renewal (or, with Release, giving the run up).
type RunUpdate struct {
	ID      string
	Attempt int
	Now     time.Time // zero: time.Now()
	Lease   time.Duration
	// Finish ends the run with this final response: cancelled with what
	// it had when its worker learnt of a cancel, or as it ended if it
	// ended first.
	Finish *Response
	// Release gives the run up (shutdown): claimable at once.
	Release bool
}

// A RunStore keeps the background runs of [Background]: a durable queue
// with leases, like the video tasks' (package videos), and the bounded
// event log of each streamed run. Implementations must be safe for
// concurrent use and hand out copies; the conformance suite
// responsestest.TestRunStore checks this contract. Times come from the
// callers.
//
// # Lease policy
//
// ClaimRun hands a run to a worker with a lease, which the worker renews
// with UpdateRun. When a lease runs out (the worker's process died), the
// next ClaimRun by any worker sees the run:
//
//   - a run that logged no event (one not streamed, or streamed but not
//     begun) and was claimed fewer than MaxAttempts times is run again
//     from the start: nobody saw any of it;
//   - any other is failed (code server_error), because its client has
//     seen events that a new run would not repeat; a cancelled run whose
//     worker died is ended as cancelled. These are the reaped runs that
//     ClaimRun returns, whose quota the claimer settles (nothing used).
//
// So a run is never left to nobody, and never run twice once any of it
// was seen.
type RunStore interface {
	// CreateRun stores a new queued run; ErrRunExists for a stored id.
	CreateRun(ctx context.Context, r *Run) error
	// GetRun returns owner's run, or an error wrapping ErrNotFound.
	GetRun(ctx context.Context, owner, id string) (*Run, error)
	// ClaimRun applies the lease policy to the runs whose lease has run
	// out (oldest first), and gives p.Worker the first one to run again
	// or else the oldest queued run: in_progress, Attempts one more,
	// leased until p.Now + p.Lease. It returns the runs that it ended
	// (reaped) too, and ErrNoRun with no run to give. Two claims never
	// get the same run.
	ClaimRun(ctx context.Context, p RunClaim) (run *Run, reaped []*Run, err error)
	// UpdateRun applies a worker's update (see [ApplyRunUpdate]).
	UpdateRun(ctx context.Context, p RunUpdate) (*Run, error)
	// CancelRun cancels owner's run (see [ApplyRunCancel]).
	CancelRun(ctx context.Context, owner, id string, now time.Time) (*Run, error)
	// AppendEvents logs events after those logged: their Seq must follow
	// (the first is the run's Events), else ErrInvalidEvents; the
	// worker is known by attempt (ErrLeaseLost otherwise, ErrRunEnded
	// once ended). The log keeps the newest MaxRunEvents.
	AppendEvents(ctx context.Context, id string, attempt int, events []Event) error
	// Events returns at most limit events of the run id with Seq above
	// after, in order; ErrEventsDropped if the log no longer holds the
	// event after+1 but holds later ones.
	Events(ctx context.Context, id string, after, limit int) ([]Event, error)
	// DeleteRun removes owner's run and its events, and returns the run
	// as it was, or returns ErrNotFound.
	DeleteRun(ctx context.Context, owner, id string) (*Run, error)
	// PruneRuns removes the runs that ended before t, with their
	// events, and returns how many.
	PruneRuns(ctx context.Context, before time.Time) (int, error)
}

// ErrInvalidEvents: AppendEvents was given events whose sequence numbers
// do not follow the log's.
var ErrInvalidEvents = errors.New("responses: events out of sequence")

// ApplyRunUpdate applies p to r, a copy of the stored run, as
// [RunStore.UpdateRun] does; stores that keep whole runs call it within
// their transaction. Errors, in this order: ErrRunEnded (done),
// ErrLeaseLost (another attempt, or not running), and for a renewal of a
// cancelled run ErrRunCancelled (the lease is renewed all the same).
func ApplyRunUpdate(r *Run, p RunUpdate) error {
	st := r.Status()
	switch {
	case r.Done:
		return ErrRunEnded
	case r.Attempts != p.Attempt || (st != StatusInProgress && st != StatusCancelled):
		return ErrLeaseLost
	}
	now := nowOr(p.Now)
	if p.Lease > 0 {
		r.LeaseExpiresAt = now.Add(p.Lease)
	}
	switch {
	case p.Finish != nil:
		r.Response = *p.Finish
		r.Done, r.EndedAt = true, now
		r.Worker, r.LeaseExpiresAt = "", time.Time{}
	case p.Release:
		r.Worker, r.LeaseExpiresAt = "", now
	case st == StatusCancelled:
		return ErrRunCancelled
	}
	return nil
}

// ApplyRunCancel cancels r, a copy of the stored run, as
// [RunStore.CancelRun] does: a queued run ends cancelled at once (no
// worker has it); an in_progress one becomes cancelled and its worker,
// told so by its next UpdateRun, ends it with what it has. A run that
// was cancelled before, completed, failed or is incomplete is
// ErrRunEnded, and left as it is (stores return it with the error).
func ApplyRunCancel(r *Run, now time.Time) error {
	switch r.Status() {
	case StatusQueued:
		r.Response.Status = StatusCancelled
		r.Done, r.EndedAt = true, nowOr(now)
		return nil
	case StatusInProgress:
		r.Response.Status = StatusCancelled
		return nil
	}
	return ErrRunEnded
}

// RunExpired reports whether r's worker let its lease run out at now.
func RunExpired(r *Run, now time.Time) bool {
	st := r.Status()
	return !r.Done && (st == StatusInProgress || st == StatusCancelled) && !now.Before(r.LeaseExpiresAt)
}

// ApplyRunExpiry applies the lease policy to r, whose lease has run out
// (RunExpired), and reports whether r is to be claimed again; otherwise
// it has ended it (failed, or cancelled).
func ApplyRunExpiry(r *Run, p RunClaim) (again bool) {
	now := nowOr(p.Now)
	max := p.MaxAttempts
	if max <= 0 {
		max = DefaultRunMaxAttempts
	}
	if r.Status() == StatusInProgress && r.Events == 0 && (r.Worker == "" || r.Attempts < max) {
		return true
	}
	if r.Status() == StatusInProgress {
		r.Response.Status = StatusFailed
		r.Response.CompletedAt = nil
		msg := "The background response did not finish: the gateway process running it stopped responding."
		r.Response.Error = &ResponseError{Code: "server_error", Message: msg}
	}
	r.Attempts++ // the worker that let its lease run out may write no more
	r.Done, r.EndedAt = true, now
	r.Worker, r.LeaseExpiresAt = "", time.Time{}
	return false
}

// ApplyRunClaim makes r, queued or to be claimed again, p.Worker's.
func ApplyRunClaim(r *Run, p RunClaim) {
	lease := p.Lease
	if lease <= 0 {
		lease = DefaultRunLease
	}
	r.Response.Status = StatusInProgress
	r.Attempts++
	r.Worker = p.Worker
	r.LeaseExpiresAt = nowOr(p.Now).Add(lease)
}

// CheckEvents checks that events follow a log of next events, as
// [RunStore.AppendEvents] requires.
func CheckEvents(next int, events []Event) error {
	for i, e := range events {
		if e.Seq != next+i {
			return fmt.Errorf("%w: event %d has sequence number %d, want %d", ErrInvalidEvents, i, e.Seq, next+i)
		}
	}
	return nil
}

// CheckNewRun checks a run given to [RunStore.CreateRun].
func CheckNewRun(r *Run) error {
	switch {
	case r == nil || r.ID == "" || r.CreatedAt.IsZero():
		return errors.New("responses: a new run needs an id and a creation time")
	case r.Status() != StatusQueued:
		return fmt.Errorf("responses: a new run must be queued, not %q", r.Status())
	}
	return nil
}

func nowOr(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

// Clone returns a deep enough copy of r for a store to hand out: the
// fields a store changes are values, the rest is shared and immutable.
func (r *Run) Clone() *Run {
	c := *r
	if r.Charge != nil {
		ch := *r.Charge
		c.Charge = &ch
	}
	return &c
}
