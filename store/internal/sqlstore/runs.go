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
