package responsestest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
)

// TestRunStore checks that the stores newStore returns keep the contract
// of responses.RunStore: creation, owner scoping, claims oldest first
// and never twice, the lease policy (a run nobody saw is run again, a
// run whose events were seen is failed, a cancelled one ends cancelled,
// and the reaped runs are returned), updates known by attempt, cancel,
// the event log in sequence and bounded to responses.MaxRunEvents, its
// replay after a sequence number, delete
// and prune. Each subtest gets a new, empty store.
func TestRunStore(t *testing.T, newStore func(t *testing.T) responses.RunStore) {
	ctx := context.Background()
	t0 := time.Unix(1700000000, 0)
	newRun := func(id string, at time.Time) *responses.Run {
		return &responses.Run{ID: id, Owner: "alice", CreatedAt: at, Request: json.RawMessage(`{"model":"m","input":"hi"}`),
			Response: responses.Response{ID: id, Object: responses.ObjectResponse, Status: responses.StatusQueued, Model: "m"},
			Stream:   true, Charge: &responses.RunCharge{KeyID: "k", Amount: 10, Model: "m"}, Prompt: 3}
	}
	claim := func(s responses.RunStore, worker string, now time.Time) (*responses.Run, []*responses.Run, error) {
		return s.ClaimRun(ctx, responses.RunClaim{Worker: worker, Now: now, Lease: time.Minute, MaxAttempts: 2})
	}
	events := func(from, n int) []responses.Event {
		evs := make([]responses.Event, n)
		for i := range evs {
			evs[i] = responses.Event{Seq: from + i, Type: "response.output_text.delta", Data: []byte(fmt.Sprintf(`{"sequence_number":%d}`, from+i))}
		}
		return evs
	}

	t.Run("CreateGetScoped", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_1", t0)))
		require.ErrorIs(t, s.CreateRun(ctx, newRun("resp_1", t0)), responses.ErrRunExists)
		got, err := s.GetRun(ctx, "alice", "resp_1")
		require.NoError(t, err)
		require.Equal(t, responses.StatusQueued, got.Status())
		require.JSONEq(t, `{"model":"m","input":"hi"}`, string(got.Request))
		require.Equal(t, &responses.RunCharge{KeyID: "k", Amount: 10, Model: "m"}, got.Charge)
		require.Equal(t, int64(3), got.Prompt)
		require.True(t, got.Stream)
		_, err = s.GetRun(ctx, "bob", "resp_1")
		require.ErrorIs(t, err, responses.ErrNotFound)
		_, err = s.CancelRun(ctx, "bob", "resp_1", t0)
		require.ErrorIs(t, err, responses.ErrNotFound)
		_, err = s.DeleteRun(ctx, "bob", "resp_1")
		require.ErrorIs(t, err, responses.ErrNotFound)
	})

	t.Run("ClaimOldestOnce", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_b", t0.Add(time.Second))))
		require.NoError(t, s.CreateRun(ctx, newRun("resp_a", t0)))
		r, reaped, err := claim(s, "w1", t0)
		require.NoError(t, err)
		require.Empty(t, reaped)
		require.Equal(t, "resp_a", r.ID)
		require.Equal(t, responses.StatusInProgress, r.Status())
		require.Equal(t, 1, r.Attempts)
		require.Equal(t, "w1", r.Worker)
		require.Equal(t, t0.Add(time.Minute).UnixNano(), r.LeaseExpiresAt.UnixNano())
		r2, _, err := claim(s, "w2", t0)
		require.NoError(t, err)
		require.Equal(t, "resp_b", r2.ID)
		_, _, err = claim(s, "w3", t0)
		require.ErrorIs(t, err, responses.ErrNoRun)
	})

	t.Run("ConcurrentClaims", func(t *testing.T) {
		s := newStore(t)
		for i := range 8 {
			require.NoError(t, s.CreateRun(ctx, newRun(fmt.Sprintf("resp_%d", i), t0.Add(time.Duration(i)))))
		}
		var (
			mu  sync.Mutex
			got = map[string]int{}
			wg  sync.WaitGroup
		)
		for w := range 4 {
			wg.Go(func() {
				for {
					r, _, err := claim(s, fmt.Sprintf("w%d", w), t0)
					if err != nil {
						require.ErrorIs(t, err, responses.ErrNoRun)
						return
					}
					mu.Lock()
					got[r.ID]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, got, 8)
		for id, n := range got {
			require.Equal(t, 1, n, id)
		}
	})

	t.Run("UpdateByAttempt", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_1", t0)))
		r, _, err := claim(s, "w1", t0)
		require.NoError(t, err)
		got, err := s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0.Add(time.Second), Lease: time.Minute})
		require.NoError(t, err)
		require.Equal(t, t0.Add(61*time.Second).UnixNano(), got.LeaseExpiresAt.UnixNano())
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: 7, Now: t0})
		require.ErrorIs(t, err, responses.ErrLeaseLost)
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: "resp_nope", Attempt: 1, Now: t0})
		require.ErrorIs(t, err, responses.ErrNotFound)
		final := r.Response
		final.Status = responses.StatusCompleted
		got, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0.Add(2 * time.Second), Finish: &final})
		require.NoError(t, err)
		require.True(t, got.Done)
		require.Equal(t, responses.StatusCompleted, got.Status())
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0, Lease: time.Minute})
		require.ErrorIs(t, err, responses.ErrRunEnded)
		run, err := s.CancelRun(ctx, "alice", r.ID, t0)
		require.ErrorIs(t, err, responses.ErrRunEnded, "a completed run cannot be cancelled")
		require.Equal(t, responses.StatusCompleted, run.Status())
	})

	t.Run("Cancel", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_q", t0)))
		got, err := s.CancelRun(ctx, "alice", "resp_q", t0)
		require.NoError(t, err)
		require.Equal(t, responses.StatusCancelled, got.Status())
		require.True(t, got.Done, "a queued run ends at once")
		_, _, err = claim(s, "w1", t0)
		require.ErrorIs(t, err, responses.ErrNoRun, "a cancelled run is never claimed")
		again, err := s.CancelRun(ctx, "alice", "resp_q", t0)
		require.ErrorIs(t, err, responses.ErrRunEnded)
		require.Equal(t, responses.StatusCancelled, again.Status())

		require.NoError(t, s.CreateRun(ctx, newRun("resp_r", t0)))
		r, _, err := claim(s, "w1", t0)
		require.NoError(t, err)
		got, err = s.CancelRun(ctx, "alice", r.ID, t0)
		require.NoError(t, err)
		require.Equal(t, responses.StatusCancelled, got.Status())
		require.False(t, got.Done, "its worker ends it")
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0, Lease: time.Minute})
		require.ErrorIs(t, err, responses.ErrRunCancelled, "the worker learns of the cancel")
		require.NoError(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(0, 2)), "and may still log its last events")
		final := r.Response
		final.Status = responses.StatusCancelled
		final.Output = []responses.OutputItem{{Type: responses.ItemMessage, ID: "msg_1", Status: responses.StatusIncomplete}}
		got, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0, Finish: &final})
		require.NoError(t, err)
		require.True(t, got.Done)
		require.Equal(t, responses.StatusCancelled, got.Status())
		require.Len(t, got.Response.Output, 1, "the output it had")
	})

	t.Run("LeasePolicy", func(t *testing.T) {
		s := newStore(t)
		// resp_1: never seen, runs again; resp_2: seen, fails;
		// resp_3: cancelled, ends cancelled.
		for i := 1; i <= 3; i++ {
			require.NoError(t, s.CreateRun(ctx, newRun(fmt.Sprintf("resp_%d", i), t0.Add(time.Duration(i)*time.Second))))
		}
		r1, _, err := claim(s, "dead", t0)
		require.NoError(t, err)
		r2, _, err := claim(s, "dead", t0)
		require.NoError(t, err)
		require.NoError(t, s.AppendEvents(ctx, r2.ID, r2.Attempts, events(0, 3)))
		r3, _, err := claim(s, "dead", t0)
		require.NoError(t, err)
		_, err = s.CancelRun(ctx, "alice", r3.ID, t0)
		require.NoError(t, err)

		_, _, err = claim(s, "w2", t0.Add(59*time.Second))
		require.ErrorIs(t, err, responses.ErrNoRun, "no lease has run out")

		later := t0.Add(2 * time.Minute)
		again, reaped, err := claim(s, "w2", later)
		require.NoError(t, err)
		require.Equal(t, r1.ID, again.ID, "a run nobody saw runs again")
		require.Equal(t, 2, again.Attempts)
		require.Equal(t, "w2", again.Worker)
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r1.ID, Attempt: r1.Attempts, Now: later, Lease: time.Minute})
		require.ErrorIs(t, err, responses.ErrLeaseLost, "the old worker is out")

		// The next claim reaps the two others.
		_, more, err := claim(s, "w2", later)
		require.ErrorIs(t, err, responses.ErrNoRun)
		reaped = append(reaped, more...)
		byID := map[string]*responses.Run{}
		for _, r := range reaped {
			byID[r.ID] = r
		}
		require.Len(t, byID, 2, "reaped: %v", reaped)
		require.Equal(t, responses.StatusFailed, byID[r2.ID].Status())
		require.NotNil(t, byID[r2.ID].Response.Error)
		require.True(t, byID[r2.ID].Done)
		require.Equal(t, responses.StatusCancelled, byID[r3.ID].Status())
		require.True(t, byID[r3.ID].Done)
		require.ErrorIs(t, s.AppendEvents(ctx, r2.ID, r2.Attempts, events(3, 1)), responses.ErrRunEnded)

		// A run nobody saw fails once it has used its attempts.
		late2 := later.Add(2 * time.Minute)
		_, reaped, err = claim(s, "w3", late2)
		require.ErrorIs(t, err, responses.ErrNoRun)
		require.Len(t, reaped, 1)
		require.Equal(t, r1.ID, reaped[0].ID)
		require.Equal(t, responses.StatusFailed, reaped[0].Status())
	})

	t.Run("Release", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_1", t0)))
		r, _, err := claim(s, "w1", t0)
		require.NoError(t, err)
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0, Release: true})
		require.NoError(t, err)
		again, _, err := claim(s, "w2", t0)
		require.NoError(t, err, "claimable at once")
		require.Equal(t, r.ID, again.ID)
	})

	t.Run("Events", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_1", t0)))
		r, _, err := claim(s, "w1", t0)
		require.NoError(t, err)
		require.ErrorIs(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(1, 2)), responses.ErrInvalidEvents)
		require.NoError(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(0, 3)))
		require.NoError(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(3, 2)))
		require.ErrorIs(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(3, 1)), responses.ErrInvalidEvents)
		require.ErrorIs(t, s.AppendEvents(ctx, r.ID, r.Attempts+1, events(5, 1)), responses.ErrLeaseLost)
		got, err := s.GetRun(ctx, "alice", r.ID)
		require.NoError(t, err)
		require.Equal(t, 5, got.Events)

		all, err := s.Events(ctx, r.ID, -1, 0)
		require.NoError(t, err)
		require.Equal(t, events(0, 5), all)
		after, err := s.Events(ctx, r.ID, 2, 1)
		require.NoError(t, err)
		require.Equal(t, events(3, 1), after)
		none, err := s.Events(ctx, r.ID, 4, 10)
		require.NoError(t, err)
		require.Empty(t, none)
		_, err = s.Events(ctx, "resp_nope", -1, 10)
		require.ErrorIs(t, err, responses.ErrNotFound)
	})

	t.Run("BoundedLog", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_1", t0)))
		r, _, err := claim(s, "w1", t0)
		require.NoError(t, err)
		total := responses.MaxRunEvents + 5
		for from := 0; from < total; from += 2000 {
			require.NoError(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(from, min(2000, total-from))))
		}
		_, err = s.Events(ctx, r.ID, -1, 10)
		require.ErrorIs(t, err, responses.ErrEventsDropped, "the oldest five are gone")
		_, err = s.Events(ctx, r.ID, 3, 10)
		require.ErrorIs(t, err, responses.ErrEventsDropped)
		got, err := s.Events(ctx, r.ID, 4, 2)
		require.NoError(t, err)
		require.Equal(t, events(5, 2), got, "the newest MaxRunEvents are kept")
		last, err := s.Events(ctx, r.ID, total-2, 10)
		require.NoError(t, err)
		require.Equal(t, events(total-1, 1), last)
	})

	t.Run("DeletePrune", func(t *testing.T) {
		s := newStore(t)
		require.NoError(t, s.CreateRun(ctx, newRun("resp_1", t0)))
		require.NoError(t, s.CreateRun(ctx, newRun("resp_2", t0)))
		r, _, err := claim(s, "w1", t0)
		require.NoError(t, err)
		require.NoError(t, s.AppendEvents(ctx, r.ID, r.Attempts, events(0, 2)))
		deleted, err := s.DeleteRun(ctx, "alice", r.ID)
		require.NoError(t, err)
		require.Equal(t, r.ID, deleted.ID)
		require.Equal(t, responses.StatusInProgress, deleted.Status(), "the run as it was")
		_, err = s.GetRun(ctx, "alice", r.ID)
		require.ErrorIs(t, err, responses.ErrNotFound)
		_, err = s.UpdateRun(ctx, responses.RunUpdate{ID: r.ID, Attempt: r.Attempts, Now: t0})
		require.ErrorIs(t, err, responses.ErrNotFound, "its worker learns of the delete")

		_, err = s.CancelRun(ctx, "alice", "resp_2", t0) // ends at t0
		require.NoError(t, err)
		n, err := s.PruneRuns(ctx, t0)
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = s.PruneRuns(ctx, t0.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		_, err = s.GetRun(ctx, "alice", "resp_2")
		require.ErrorIs(t, err, responses.ErrNotFound)
	})
}
