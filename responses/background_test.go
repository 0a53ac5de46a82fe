package responses_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// gateBackend streams n text deltas ("t0 ", "t1 ", …) and pauses before
// delta pauseAt until release is closed (or its context ends, which it
// reports on cancelled); it tells started of each run.
type gateBackend struct {
	n, pauseAt int
	started    chan struct{}
	release    chan struct{}
	cancelled  chan error
}

func newGate(n, pauseAt int) *gateBackend {
	return &gateBackend{n: n, pauseAt: pauseAt, started: make(chan struct{}, 16), release: make(chan struct{}),
		cancelled: make(chan error, 16)}
}

func (g *gateBackend) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	return func(yield func(responses.Delta, error) bool) {
		g.started <- struct{}{}
		for i := range g.n {
			if i == g.pauseAt {
				select {
				case <-g.release:
				case <-ctx.Done():
					g.cancelled <- ctx.Err()
					return
				}
			}
			if !yield(responses.Delta{Text: fmt.Sprintf("t%d ", i)}, nil) {
				return
			}
		}
		yield(responses.Delta{Usage: &responses.Usage{InputTokens: 5, OutputTokens: g.n,
			InputTokensDetails:  responses.InputTokensDetails{CachedTokens: 3},
			OutputTokensDetails: responses.OutputTokensDetails{ReasoningTokens: 1}}}, nil)
	}
}

func (g *gateBackend) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	var text strings.Builder
	res := &responses.Result{}
	for d, err := range g.Stream(ctx, p) {
		if err != nil {
			return nil, err
		}
		text.WriteString(d.Text)
		if d.Usage != nil {
			res.Usage = *d.Usage
		}
	}
	res.Output = []responses.Output{{Text: text.String()}}
	return res, nil
}

// bgSetup is a handler with a Background over a memory run store, behind
// auth.Middleware with one key of 100000 tokens.
type bgSetup struct {
	h    http.Handler
	bg   *responses.Background
	keys *servedtest.Keys
	runs *responses.MemoryRunStore
	stop func()
}

func newBGSetup(t *testing.T, b responses.Backend, opts ...responses.BackgroundOption) *bgSetup {
	t.Helper()
	return newBGSetupWith(t, b, nil, opts...)
}

// newBGSetupWith is newBGSetup with options of the handler as well.
func newBGSetupWith(t *testing.T, b responses.Backend, hopts []responses.Option, opts ...responses.BackgroundOption) *bgSetup {
	t.Helper()
	keys := &servedtest.Keys{MemoryKeyStore: auth.NewMemoryKeyStore()}
	require.NoError(t, keys.Add(context.Background(), servedtest.Secret, auth.Key{ID: "key_test", Owner: "acct", Quota: auth.LimitedQuota(100000)}))
	runs := responses.NewMemoryRunStore()
	bg := responses.NewBackground(runs, append([]responses.BackgroundOption{responses.WithKeyStore(keys),
		responses.WithFollowInterval(5 * time.Millisecond)}, opts...)...)
	inner := newHandlerWith(b, append(hopts, responses.WithBackground(bg))...)
	mw := auth.Middleware(keys)(inner)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+servedtest.Secret)
		mw.ServeHTTP(w, r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = bg.Run(ctx) }()
	s := &bgSetup{h: h, bg: bg, keys: keys, runs: runs}
	s.stop = func() {
		require.NoError(t, bg.Shutdown(context.Background()))
		cancel()
		<-done
	}
	t.Cleanup(func() { cancel(); <-done })
	return s
}

func (s *bgSetup) get(t *testing.T, id string) map[string]any {
	t.Helper()
	w := do(t, s.h, http.MethodGet, "/v1/responses/"+id, "")
	require.Equal(t, 200, w.Code, w.Body.String())
	return decode(t, w.Body.String())
}

func TestBackgroundCreatePollComplete(t *testing.T) {
	t.Parallel()
	g := newGate(4, 2)
	s := newBGSetup(t, g)
	w := post(t, s.h, `{"model":"demo-chat","input":"Slowly.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	created := decode(t, w.Body.String())
	require.Equal(t, "queued", created["status"])
	require.Equal(t, true, created["background"])
	id := created["id"].(string)
	<-g.started
	require.Equal(t, "in_progress", s.get(t, id)["status"])
	require.Equal(t, int64(100000), s.keys.Quota(t).Remaining, "reserved, not yet charged")

	close(g.release)
	s.stop() // waits for the run
	final := s.get(t, id)
	require.Equal(t, "completed", final["status"])
	require.Equal(t, true, final["background"])
	require.Equal(t, "t0 t1 t2 t3 ", outputText(final))
	require.Equal(t, int64(100000-9), s.keys.Quota(t).Remaining, "the usage is charged when the run ends")
	settled := s.keys.Settled()
	require.Len(t, settled, 1)
	require.Positive(t, settled[0].Reserved)
	require.Equal(t, int64(9), settled[0].Used)
	require.Equal(t, int64(3), settled[0].CachedTokens, "the usage's details are recorded")
	require.Equal(t, int64(1), settled[0].ReasoningTokens)

	// Cancelling a finished response answers it as it is.
	w = do(t, s.h, http.MethodPost, "/v1/responses/"+id+"/cancel", "")
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, "completed", decode(t, w.Body.String())["status"])
	require.Len(t, s.keys.Settled(), 1, "and settles nothing more")
}

func TestBackgroundCancel(t *testing.T) {
	t.Parallel()
	g := newGate(10, 3)
	s := newBGSetup(t, g)
	w := post(t, s.h, `{"model":"demo-chat","input":"Cancel me.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	id := decode(t, w.Body.String())["id"].(string)
	<-g.started

	w = do(t, s.h, http.MethodPost, "/v1/responses/"+id+"/cancel", "")
	require.Equal(t, 200, w.Code, w.Body.String())
	reply := decode(t, w.Body.String())
	require.Equal(t, "cancelled", reply["status"])
	require.Equal(t, "t0 t1 t2 ", outputText(reply), "the answer waits for the worker's record: the output so far")
	require.ErrorIs(t, <-g.cancelled, context.Canceled, "the backend's context is cancelled")
	s.stop()

	final := s.get(t, id)
	require.Equal(t, "cancelled", final["status"])
	require.Equal(t, "t0 t1 t2 ", outputText(final), "the output so far is kept")
	settled := s.keys.Settled()
	require.Len(t, settled, 1)
	require.Positive(t, settled[0].Used, "the usage so far is charged")
	require.Equal(t, int64(100000)-settled[0].Used, s.keys.Quota(t).Remaining)

	// Cancelling again answers the same; the charge is settled once.
	w = do(t, s.h, http.MethodPost, "/v1/responses/"+id+"/cancel", "")
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, "cancelled", decode(t, w.Body.String())["status"])
	require.Len(t, s.keys.Settled(), 1)
}

func TestBackgroundCancelQueued(t *testing.T) {
	t.Parallel()
	g := newGate(2, 5)
	s := newBGSetup(t, g)
	s.stop() // no worker: the run stays queued
	w := post(t, s.h, `{"model":"demo-chat","input":"Never run.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	id := decode(t, w.Body.String())["id"].(string)
	w = do(t, s.h, http.MethodPost, "/v1/responses/"+id+"/cancel", "")
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, "cancelled", decode(t, w.Body.String())["status"])
	require.Equal(t, "cancelled", s.get(t, id)["status"])
	settled := s.keys.Settled()
	require.Len(t, settled, 1, "the reservation is released")
	require.Zero(t, settled[0].Used)
	require.Equal(t, int64(100000), s.keys.Quota(t).Remaining)
}

func TestBackgroundErrors(t *testing.T) {
	t.Parallel()
	s := newBGSetup(t, newGate(1, 5))
	w := post(t, s.h, `{"model":"demo-chat","input":"x","background":true,"store":false}`)
	servedtest.RequireError(t, w, 400, "invalid_request_error", "background", `"store": true`)

	w = post(t, newTestHandler(), `{"model":"demo-chat","input":"x","background":true}`)
	servedtest.RequireError(t, w, 400, "invalid_request_error", "background", "not enabled")

	// A foreground response cannot be cancelled, nor streamed again.
	w = post(t, s.h, `{"model":"demo-chat","input":"x"}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	id := decode(t, w.Body.String())["id"].(string)
	w = do(t, s.h, http.MethodPost, "/v1/responses/"+id+"/cancel", "")
	servedtest.RequireError(t, w, 400, "invalid_request_error", "", "background")
	w = do(t, s.h, http.MethodGet, "/v1/responses/"+id+"?stream=true", "")
	servedtest.RequireError(t, w, 400, "invalid_request_error", "stream", "cannot be streamed")

	w = do(t, s.h, http.MethodPost, "/v1/responses/resp_nope/cancel", "")
	servedtest.RequireError(t, w, 404, "not_found", "", "resp_nope")
	w = do(t, s.h, http.MethodGet, "/v1/responses/resp_nope?stream=true&starting_after=x", "")
	servedtest.RequireError(t, w, 400, "invalid_request_error", "starting_after", "starting_after")
	for _, tc := range []struct{ query, body, param string }{
		{"?stream=maybe", "", "stream"},
		{"?stream=true&starting_after=-2", "", "starting_after"},
		{"", `{"stream":"yes"}`, ""},
		{"", `not json`, ""},
	} {
		w = do(t, s.h, http.MethodGet, "/v1/responses/"+id+tc.query, tc.body)
		servedtest.RequireError(t, w, 400, "invalid_request_error", tc.param, "")
	}
	w = do(t, s.h, http.MethodGet, "/v1/responses/"+id, `{"stream":false}`)
	require.Equal(t, 200, w.Code, "a body that asks for no stream: %s", w.Body.String())
	w = do(t, s.h, http.MethodGet, "/v1/responses/resp_x/cancel", "")
	require.Equal(t, 405, w.Code)
	require.Equal(t, "POST", w.Header().Get("Allow"))
}

// lastID is the response id of the last lifecycle event readSSE read.
var lastID string

// readSSE reads events from r until a terminal event or [DONE] (true),
// or until stop says to stop (false).
func readSSE(t *testing.T, r *bufio.Reader, stop func(seq int) bool) (seqs []int, text string, done bool) {
	t.Helper()
	var b strings.Builder
	for ev, err := range sse.Read(r) {
		require.NoError(t, err)
		if ev.IsDone() {
			return seqs, b.String(), true
		}
		var data map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &data))
		seq := int(data["sequence_number"].(float64))
		if r, ok := data["response"].(map[string]any); ok {
			lastID = r["id"].(string)
		}
		seqs = append(seqs, seq)
		if ev.Type == responses.EventOutputTextDelta {
			b.WriteString(data["delta"].(string))
		}
		if stop(seq) {
			return seqs, b.String(), false
		}
	}
	return seqs, b.String(), false
}

// A client that drops the stream of a background response at event 50
// and resumes it with starting_after=50 sees every event exactly once.
func TestBackgroundStreamResume(t *testing.T) {
	t.Parallel()
	g := newGate(120, 80) // pauses after event 50 has gone out, until resumed
	s := newBGSetup(t, g)
	srv := httptest.NewServer(s.h)
	defer srv.Close()

	res, err := http.Post(srv.URL+"/v1/responses", "application/json",
		strings.NewReader(`{"model":"demo-chat","input":"Stream me.","background":true,"stream":true}`))
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	first, text1, done := readSSE(t, bufio.NewReader(res.Body), func(seq int) bool { return seq == 50 })
	firstID := lastID
	require.False(t, done)
	res.Body.Close() // the client drops

	id := firstID
	close(g.release)
	res, err = http.Get(srv.URL + "/v1/responses/" + id + "?stream=true&starting_after=50")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	second, text2, done := readSSE(t, bufio.NewReader(res.Body), func(int) bool { return false })
	require.True(t, done, "the resumed stream ends with [DONE]")

	all := append(first, second...)
	for i, seq := range all {
		require.Equal(t, i, seq, "every event once, in order")
	}
	var want strings.Builder
	for i := range 120 {
		fmt.Fprintf(&want, "t%d ", i)
	}
	require.Equal(t, want.String(), text1+text2)
	s.stop()
	final := s.get(t, id)
	require.Equal(t, "completed", final["status"])

	// A replay from the start gives the same events.
	res2, err := http.Get(srv.URL + "/v1/responses/" + id + "?stream=true")
	require.NoError(t, err)
	defer res2.Body.Close()
	replay, _, done := readSSE(t, bufio.NewReader(res2.Body), func(int) bool { return false })
	require.True(t, done)
	require.Equal(t, all, replay)
}

// Runs whose worker died are left to another: one nobody saw runs again
// and completes, one whose events were seen is failed, and its
// reservation released.
func TestBackgroundTakesOverDeadWorkersRuns(t *testing.T) {
	t.Parallel()
	g := newGate(3, 5)
	s := newBGSetup(t, g)
	s.stop() // the setup's own worker is not the one that dies
	ctx := context.Background()
	w := post(t, s.h, `{"model":"demo-chat","input":"Quiet.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	w = post(t, s.h, `{"model":"demo-chat","input":"Seen.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	seen := decode(t, w.Body.String())["id"].(string)

	// A worker claims both, logs an event of the second, and dies.
	dead := endpointtest.FixedClock().Add(-time.Hour)
	var quietID, owner string
	for range 2 {
		r, _, err := s.runs.ClaimRun(ctx, responses.RunClaim{Worker: "dead", Now: dead, Lease: time.Minute})
		require.NoError(t, err)
		owner = r.Owner
		if r.ID == seen {
			require.NoError(t, s.runs.AppendEvents(ctx, r.ID, r.Attempts, []responses.Event{{Seq: 0, Type: "response.created", Data: []byte(`{}`)}}))
		} else {
			quietID = r.ID
		}
	}

	// A new Background takes over.
	bg := responses.NewBackground(s.runs, responses.WithKeyStore(s.keys))
	h := newHandlerWith(g, responses.WithBackground(bg))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = bg.Run(runCtx) }()
	<-g.started
	require.NoError(t, bg.Shutdown(ctx))
	cancel()
	<-done

	_ = h
	q, err := s.runs.GetRun(ctx, owner, quietID)
	require.NoError(t, err)
	require.Equal(t, responses.StatusCompleted, q.Status(), "run again, to its end")
	require.Equal(t, 2, q.Attempts)
	f, err := s.runs.GetRun(ctx, owner, seen)
	require.NoError(t, err)
	require.Equal(t, responses.StatusFailed, f.Status())
	require.Contains(t, f.Response.Error.Message, "stopped responding")
	var used []int64
	for _, p := range s.keys.Settled() {
		used = append(used, p.Used)
	}
	require.ElementsMatch(t, []int64{0, 8}, used, "the failed run's reservation released, the other's charged")
}

// Deleting a background response stops its run and settles its charge
// once, whether it was queued or running.
func TestBackgroundDelete(t *testing.T) {
	t.Parallel()
	g := newGate(10, 2)
	s := newBGSetup(t, g)
	w := post(t, s.h, `{"model":"demo-chat","input":"Delete me.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	running := decode(t, w.Body.String())["id"].(string)
	<-g.started
	w = do(t, s.h, http.MethodDelete, "/v1/responses/"+running, "")
	require.Equal(t, 200, w.Code, w.Body.String())
	require.ErrorIs(t, <-g.cancelled, context.Canceled, "the run is stopped")
	s.stop()
	w = do(t, s.h, http.MethodGet, "/v1/responses/"+running, "")
	require.Equal(t, 404, w.Code, "not stored again by its worker: %s", w.Body.String())
	require.Len(t, s.keys.Settled(), 1)

	w = post(t, s.h, `{"model":"demo-chat","input":"Never run.","background":true}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	queued := decode(t, w.Body.String())["id"].(string)
	w = do(t, s.h, http.MethodDelete, "/v1/responses/"+queued, "")
	require.Equal(t, 200, w.Code, w.Body.String())
	settled := s.keys.Settled()
	require.Len(t, settled, 2)
	require.Zero(t, settled[1].Used)
	require.Equal(t, int64(100000)-settled[0].Used, s.keys.Quota(t).Remaining, "nothing stays reserved")
	w = do(t, s.h, http.MethodDelete, "/v1/responses/"+queued, "")
	require.Equal(t, 404, w.Code)
}

// TestBackgroundRunsTheInterceptors: a background run asks the backend
// through the handler's interceptors, which see the run's caller; one
// that refuses ends the run failed with its error.
func TestBackgroundRunsTheInterceptors(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	guard := func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			mu.Lock()
			seen = append(seen, c.Family+" "+c.Principal.KeyID+" "+c.Principal.Owner)
			mu.Unlock()
			if strings.Contains(c.Prompt(), "forbidden") {
				return nil, apierrors.InvalidRequest("input", "The prompt names a forbidden word.")
			}
			return next(ctx, c)
		}
	}
	g := newGate(2, -1)
	s := newBGSetupWith(t, g, []responses.Option{endpoint.WithInterceptors(guard)})
	// Streamed, each POST answers once its run has ended.
	run := func(input string) string {
		w := post(t, s.h, `{"model":"demo-chat","input":"`+input+`","background":true,"stream":true}`)
		require.Equal(t, 200, w.Code, w.Body.String())
		_, rest, ok := strings.Cut(w.Body.String(), `"id":"`)
		require.True(t, ok, w.Body.String())
		return rest[:strings.IndexByte(rest, '"')]
	}
	ok, refused := run("Fine."), run("A forbidden word.")

	require.Equal(t, "completed", s.get(t, ok)["status"])
	failed := s.get(t, refused)
	require.Equal(t, "failed", failed["status"])
	require.Contains(t, fmt.Sprint(failed["error"]), "The prompt names a forbidden word.")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"responses key_test ", "responses key_test "}, seen, "the run's key; its principal's owner is not kept")
}
