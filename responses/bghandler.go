package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// The messages of background requests that cannot be served.
const (
	msgBackgroundStore = `Background responses need "store": true: a background response is kept, to be polled.`
	msgNotBackground   = "Only responses created with \"background\": true can be cancelled."
	msgNotStreamed     = "Response %s cannot be streamed: only background responses created with \"stream\": true keep their events."
)

var _ pipeline.Deferrer[*createCall] = (*creator)(nil)

// Defer takes over a background request (see pipeline.Deferrer): it
// stores the queued run, with the quota reserved for it, and answers the
// queued response; or, for "stream": true, follows the run's events as
// a worker of the Background produces them.
func (h *creator) Defer(w http.ResponseWriter, r *http.Request, c *createCall, prompt int64, ch *pipeline.Charge) bool {
	req := c.p.Request
	if !req.InBackground() {
		return false
	}
	ctx := r.Context()
	b := h.cfg.background
	now := h.cfg.Now()
	resp := newResponse(req, ids.New(IDPrefix), now.Unix())
	resp.Status = StatusQueued
	yes := true
	resp.Background = &yes
	body := c.p.Body()
	if body == nil {
		var err error
		if body, err = json.Marshal(req); err != nil {
			h.cfg.Settle(ctx, ch, pipeline.Usage{})
			h.cfg.Fail(w, r, apierrors.Internal(err))
			return true
		}
	}
	run := &Run{ID: resp.ID, Owner: c.owner, CreatedAt: now, Request: bytes.Clone(body), Response: *resp,
		Stream: req.Stream, Prompt: prompt}
	if amount := ch.Amount(); amount > 0 {
		run.Charge = &RunCharge{KeyID: ch.KeyID(), Amount: amount, Model: c.p.Model.ID}
	}
	if err := b.runs.CreateRun(ctx, run); err != nil {
		h.cfg.Settle(ctx, ch, pipeline.Usage{})
		h.cfg.Fail(w, r, storeError(ctx, err))
		return true
	}
	b.Wake()
	if !req.Stream {
		_ = httpjson.Write(w, http.StatusOK, resp)
		return true
	}
	(*handler)(h).follow(w, r, run.ID, -1)
	return true
}

// get serves GET /v1/responses/{id}: the stored response, or the
// background run as it stands; with stream=true (in the query, or in a
// JSON body as the Go SDK sends it), the run's events after
// starting_after, then the live ones to its end.
func (h *handler) get(w http.ResponseWriter, r *http.Request, id string) {
	stream, after, err := h.streamParams(r)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	if stream {
		h.getStream(w, r, id, after)
		return
	}
	ctx := r.Context()
	owner, err := h.owner(ctx)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	var resp *Response
	sr, err := h.cfg.store.Get(ctx, owner, id)
	if err == nil {
		resp = &sr.Response
	} else if b := h.cfg.background; errors.Is(err, ErrNotFound) && b != nil {
		var run *Run
		if run, err = b.runs.GetRun(ctx, owner, id); err == nil {
			resp = &run.Response
		}
	}
	if err != nil {
		h.cfg.Fail(w, r, h.lookupError(ctx, err, id))
		return
	}
	body, err := json.Marshal(resp)
	if err != nil {
		h.cfg.Fail(w, r, apierrors.Internal(err))
		return
	}
	httpjson.WriteRaw(w, http.StatusOK, body)
}

// streamParams reads stream and starting_after from the query, or from
// a small JSON body (the Go SDK's GetStreaming sends {"stream":true}).
// starting_after defaults to -1: every event.
func (h *handler) streamParams(r *http.Request) (stream bool, after int, err error) {
	q := r.URL.Query()
	after = -1
	if v := q.Get("stream"); v != "" {
		if stream, err = strconv.ParseBool(v); err != nil {
			return false, 0, apierrors.InvalidRequestf("stream", "stream must be true or false, got %s", apierrors.Quote(v))
		}
	}
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 4096))
		var o struct {
			Stream        *bool `json:"stream"`
			StartingAfter *int  `json:"starting_after"`
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if err := json.Unmarshal(b, &o); err != nil {
				return false, 0, apierrors.InvalidRequest("", "The request body, if any, must be a JSON object such as {\"stream\": true, \"starting_after\": 10}.").WithCause(err)
			}
		}
		if o.Stream != nil {
			stream = *o.Stream
		}
		if o.StartingAfter != nil {
			after = *o.StartingAfter
		}
	}
	if v := q.Get("starting_after"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return false, 0, apierrors.InvalidRequestf("starting_after", "starting_after must be a sequence number (an integer, 0 or more), got %s", apierrors.Quote(v))
		}
		after = n
	}
	return stream, after, nil
}

// getStream serves GET /v1/responses/{id}?stream=true.
func (h *handler) getStream(w http.ResponseWriter, r *http.Request, id string, after int) {
	ctx := r.Context()
	notStreamed := apierrors.InvalidRequestf("stream", msgNotStreamed, apierrors.Quote(id))
	// A response without a run (or not kept since) is not streamed.
	_, run, ok, err := h.backgroundRun(w, r, id, notStreamed, func(runs RunStore, owner string) (*Run, error) {
		return runs.GetRun(ctx, owner, id)
	})
	switch {
	case !ok:
		return
	case err != nil:
		h.cfg.Fail(w, r, storeError(ctx, err))
		return
	case !run.Stream:
		h.cfg.Fail(w, r, notStreamed)
		return
	}
	h.follow(w, r, id, after)
}

// backgroundRun asks find for the run of response id on the handler's
// run store, for the caller's owner, and answers the request itself
// (ok false) when that ends it: the caller refused, the run not found
// (ErrNotFound, or no Background) and the response stored without one
// (notRun), or neither found (404). Any other error of find is
// returned, with the run, for the caller to judge.
func (h *handler) backgroundRun(w http.ResponseWriter, r *http.Request, id string, notRun error,
	find func(runs RunStore, owner string) (*Run, error)) (owner string, run *Run, ok bool, err error) {
	ctx := r.Context()
	if owner, err = h.owner(ctx); err != nil {
		h.cfg.Fail(w, r, err)
		return "", nil, false, nil
	}
	err = ErrNotFound
	if b := h.cfg.background; b != nil {
		run, err = find(b.runs, owner)
	}
	if !errors.Is(err, ErrNotFound) {
		return owner, run, true, err
	}
	if _, serr := h.cfg.store.Get(ctx, owner, id); serr == nil {
		h.cfg.Fail(w, r, notRun)
	} else {
		h.cfg.Fail(w, r, h.lookupError(ctx, err, id))
	}
	return "", nil, false, nil
}

// terminalEvent reports whether an event ends a response's stream.
func terminalEvent(typ string) bool {
	return typ == EventCompleted || typ == EventIncomplete || typ == EventFailed
}

// follow streams the events of run id with sequence numbers above
// after: those logged, then the live ones as they are logged (told by
// this process's workers, or by asking the store every follow interval
// when the run is on another process), until the run's terminal event,
// or its end (a cancelled run has none).
func (h *handler) follow(w http.ResponseWriter, r *http.Request, id string, after int) {
	ctx := r.Context()
	b := h.cfg.background
	sub := b.subscribe(id)
	defer b.unsubscribe(id, sub)
	s, ok := h.cfg.StartStream(w, r)
	if !ok {
		return
	}
	defer s.Close()
	owner, _ := h.owner(ctx)
	timer := time.NewTimer(b.cfg.follow)
	defer timer.Stop()
	ended := false // the run had ended before the last read of its events
	for {
		evs, err := b.runs.Events(ctx, id, after, defaultEventsPerRead)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, ErrEventsDropped) {
				err = apierrors.InvalidRequestf("starting_after", "The events after %d are no longer kept (a background response keeps its newest %d).", after, MaxRunEvents).WithCause(err)
			} else {
				err = storeError(ctx, err)
			}
			h.cfg.Hook(r, err)
			_ = s.Error(err)
			return
		}
		for _, e := range evs {
			if err := s.WriteRaw(e.Type, e.Data); err != nil {
				return
			}
			after = e.Seq
			if terminalEvent(e.Type) {
				_ = s.Done()
				return
			}
		}
		if len(evs) > 0 {
			if err := s.Flush(); err != nil {
				return
			}
			if len(evs) == defaultEventsPerRead {
				continue
			}
		}
		if ended {
			_ = s.Done()
			return
		}
		run, err := b.runs.GetRun(ctx, owner, id)
		switch {
		case errors.Is(err, ErrNotFound):
			_ = s.Done() // deleted
			return
		case err == nil && run.Done:
			ended = true // read the events once more: the last ones were logged before
			continue
		}
		timer.Reset(b.cfg.follow)
		select {
		case <-ctx.Done():
			return
		case <-sub:
		case <-timer.C:
		}
	}
}

// cancel serves POST /v1/responses/{id}/cancel: a queued or in_progress
// background response is cancelled (its worker's backend call is
// stopped, on whatever process runs it), and answered with status
// cancelled; a background response that has ended (cancelled before,
// completed, failed, incomplete) is answered as it is. A response that
// was not created in the background is a 400.
func (h *handler) cancel(w http.ResponseWriter, r *http.Request, id string) {
	ctx := r.Context()
	owner, run, ok, err := h.backgroundRun(w, r, id, apierrors.InvalidRequest("", msgNotBackground), func(runs RunStore, owner string) (*Run, error) {
		return runs.CancelRun(ctx, owner, id, h.cfg.Now())
	})
	b := h.cfg.background
	switch {
	case !ok:
		return
	case errors.Is(err, ErrRunEnded) && run != nil:
		// Ended (cancelled before, completed, failed, incomplete): the
		// response as it is, as OpenAI's API answers.
		if sr, serr := h.cfg.store.Get(ctx, owner, id); serr == nil {
			run.Response = sr.Response
		}
	case err != nil:
		h.cfg.Fail(w, r, storeError(ctx, err))
		return
	case run.Done:
		// Cancelled while queued: no worker will have it; record it here.
		_ = h.cfg.store.Put(context.WithoutCancel(ctx), &StoredResponse{Owner: owner, Response: run.Response, Input: runInput(run)})
		b.settle(ctx, run, pipeline.Usage{})
		b.notify(id)
	default:
		b.stopLocal(id, errRunCancelled)
		if final := h.awaitEnd(ctx, owner, id); final != nil {
			run.Response = *final
		}
	}
	_ = httpjson.Write(w, http.StatusOK, &run.Response)
}

// cancelWait bounds how long a cancel waits for the worker of a running
// response to stop and record what it has.
const cancelWait = 5 * time.Second

// awaitEnd waits, at most cancelWait, for the run id to end after a
// cancel, and returns its final response: cancelled with the output and
// usage so far, or, if it ended before its worker learnt of the cancel,
// as it ended. It returns nil if it did not end in time (its worker's
// process may have died: the run ends cancelled once its lease runs out).
func (h *handler) awaitEnd(ctx context.Context, owner, id string) *Response {
	b := h.cfg.background
	sub := b.subscribe(id)
	defer b.unsubscribe(id, sub)
	ctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	timer := time.NewTimer(b.cfg.follow)
	defer timer.Stop()
	for {
		run, err := b.runs.GetRun(ctx, owner, id)
		if err != nil {
			return nil
		}
		if run.Done {
			if sr, err := h.cfg.store.Get(ctx, owner, id); err == nil {
				return &sr.Response
			}
			return &run.Response
		}
		timer.Reset(b.cfg.follow)
		select {
		case <-ctx.Done():
			return nil
		case <-sub:
		case <-timer.C:
		}
	}
}

// deleteRun removes the background run of a deleted response, if it has
// one, stopping it if this process runs it; it reports whether there
// was one.
func (h *handler) deleteRun(ctx context.Context, owner, id string) (bool, error) {
	b := h.cfg.background
	if b == nil {
		return false, nil
	}
	run, err := b.runs.DeleteRun(ctx, owner, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("responses: deleting run %s: %w", id, err)
	}
	b.stopLocal(id, errRunDeleted)
	b.notify(id)
	// A run that no worker holds settles here: one still queued, or one
	// whose worker died (its lease ran out). A held one is settled by
	// its worker, which learns of the delete at its next renewal.
	if !run.Done && (run.Status() == StatusQueued || RunExpired(run, h.cfg.Now())) {
		b.settle(ctx, run, pipeline.Usage{})
	}
	return true, nil
}
