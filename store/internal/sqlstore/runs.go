package sqlstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/gatewaykit/gatewaykit/responses"
)

// RunTx is how [ClaimRun] reads and writes the runs of a store, in the
// store's write transaction.
type RunTx struct {
	// Expired returns runs not done whose lease ran out by now, oldest
	// first: a batch of them, or all if the store does not batch.
	Expired func(now time.Time) ([]*responses.Run, error)
	// Queued returns the oldest queued run, or nil if there is none.
	Queued func() (*responses.Run, error)
	// Write records r, which exists.
	Write func(r *responses.Run) error
	// Get reads run id, locked for the transaction (UpdateRun,
	// CancelRun), or fails with Missing(id) if there is none.
	Get func(id string) (*responses.Run, error)
	// Missing returns the error of run id not found (wrapping
	// responses.ErrNotFound).
	Missing func(id string) error
}

// ClaimRun is the ClaimRun of [responses.RunStore] for the store named
// name ("postgres"): in one transaction (inTx, which may run claim
// again if it retries), it takes over or fails the runs whose lease ran
// out (responses.ApplyRunExpiry), reading batch of them at a time (0:
// all at once), and otherwise claims the oldest queued run
// (responses.ApplyRunClaim).
func ClaimRun(name string, p responses.RunClaim, batch int, inTx func(claim func(t RunTx) error) error) (*responses.Run, []*responses.Run, error) {
	if p.Worker == "" {
		return nil, nil, errors.New(name + ": ClaimRun needs a worker name")
	}
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	var (
		claimed *responses.Run
		reaped  []*responses.Run
	)
	err := inTx(func(t RunTx) error {
		claimed, reaped = nil, nil
		for {
			expired, err := t.Expired(p.Now)
			if err != nil {
				return err
			}
			for _, r := range expired {
				if responses.ApplyRunExpiry(r, p) {
					claimed = r
					break
				}
				if err := t.Write(r); err != nil {
					return err
				}
				reaped = append(reaped, r)
			}
			if claimed != nil || batch <= 0 || len(expired) < batch {
				break
			}
		}
		if claimed == nil {
			r, err := t.Queued()
			if err != nil || r == nil {
				return err
			}
			claimed = r
		}
		responses.ApplyRunClaim(claimed, p)
		return t.Write(claimed)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: claiming a run: %w", name, err)
	}
	if claimed == nil {
		return nil, reaped, responses.ErrNoRun
	}
	return claimed, reaped, nil
}

// UpdateRun is the UpdateRun of [responses.RunStore]: in one
// transaction (inTx, which may run update again if it retries), it
// applies p to the run (responses.ApplyRunUpdate) and writes it; a
// cancelled run is written and returned with responses.ErrRunCancelled.
// A retried Finish that finds its run ended by its own attempt (the
// answer of the first COMMIT lost) succeeds.
func UpdateRun(p responses.RunUpdate, inTx func(update func(t RunTx) error) error) (*responses.Run, error) {
	var (
		out       *responses.Run
		cancelled bool
		runs      int
	)
	err := inTx(func(t RunTx) error {
		runs++
		r, err := t.Get(p.ID)
		if err != nil {
			return err
		}
		err = responses.ApplyRunUpdate(r, p)
		cancelled = errors.Is(err, responses.ErrRunCancelled)
		if err != nil && !cancelled {
			if runs > 1 && p.Finish != nil && errors.Is(err, responses.ErrRunEnded) && r.Attempts == p.Attempt {
				out = r // our own Finish, whose COMMIT's answer was lost
				return nil
			}
			return err
		}
		out = r
		return t.Write(r)
	})
	if err != nil {
		return nil, err
	}
	if cancelled {
		return out, responses.ErrRunCancelled
	}
	return out, nil
}

// CancelRun is the CancelRun of [responses.RunStore]: in one transaction
// (inTx), it cancels owner's run id (responses.ApplyRunCancel) and
// writes it; a run that has ended is returned as it is, with
// responses.ErrRunEnded.
func CancelRun(owner, id string, now time.Time, inTx func(cancel func(t RunTx) error) error) (*responses.Run, error) {
	var (
		out   *responses.Run
		ended bool
	)
	err := inTx(func(t RunTx) error {
		out, ended = nil, false
		r, err := t.Get(id)
		if err != nil {
			return err
		}
		if r.Owner != owner {
			return t.Missing(id)
		}
		out = r
		if err := responses.ApplyRunCancel(r, now); err != nil {
			ended = true
			return nil
		}
		return t.Write(r)
	})
	if err != nil {
		return nil, err
	}
	if ended {
		return out, responses.ErrRunEnded
	}
	return out, nil
}
