package relay_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/relay"
)

// switchable is a set of upstreams whose statuses a test changes, and
// which record the order of the calls they receive.
type switchable struct {
	mu     sync.Mutex
	calls  []string
	status map[string]*atomic.Int32
}

func (s *switchable) server(t *testing.T, name string, status int) string {
	t.Helper()
	if s.status == nil {
		s.status = map[string]*atomic.Int32{}
	}
	st := new(atomic.Int32)
	st.Store(int32(status))
	s.status[name] = st
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.calls = append(s.calls, name)
		s.mu.Unlock()
		w.WriteHeader(int(st.Load()))
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func (s *switchable) set(name string, status int) { s.status[name].Store(int32(status)) }

// take returns the calls since the last take.
func (s *switchable) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func doOnce(t *testing.T, r *relay.Relay) (status int, upstream string) {
	t.Helper()
	res, u, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
	if err != nil {
		return 0, ""
	}
	res.Body.Close()
	return res.StatusCode, u.Name
}

// TestDoCoolsDownAFailedUpstream: an upstream that failed is not tried
// first again until its cool-down (1s, then 2s, …) ends; a success ends
// it and resets it.
func TestDoCoolsDownAFailedUpstream(t *testing.T) {
	t.Parallel()
	s := &switchable{}
	a := s.server(t, "a", 500)
	b := s.server(t, "b", 200)
	r := newRelay(t, "m", []relay.Upstream{{Name: "a", BaseURL: a}, {Name: "b", BaseURL: b}})
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	relay.SetClock(r, clk.Now)

	step := func(advance time.Duration, want ...string) {
		t.Helper()
		clk.advance(advance)
		status, name := doOnce(t, r)
		require.Equal(t, 200, status)
		require.Equal(t, "b", name)
		require.Equal(t, want, s.take(), "after %s", advance)
	}
	step(0, "a", "b")                            // a fails: cools for 1s
	step(500*time.Millisecond, "b")              // a cools
	step(600*time.Millisecond, "a", "b")         // 1.1s: a is tried again, and fails: 2s
	step(1900*time.Millisecond, "b")             // 3.0s: still cooling (until 3.1s)
	step(200*time.Millisecond, "a", "b")         // 3.2s: tried, fails again: 4s
	step(4*time.Second, "a", "b")                // 7.2s: tried, fails: 8s
	step(7*time.Second, "b")                     // cooling
	step(time.Second+time.Millisecond, "a", "b") // fails: 16s
	step(16*time.Second+1, "a", "b")             // fails: 30s (capped, not 32s)
	step(30*time.Second-1, "b")
	step(1, "a", "b") // fails: 30s again

	s.set("a", 200)
	clk.advance(30 * time.Second)
	status, name := doOnce(t, r)
	require.Equal(t, 200, status)
	require.Equal(t, "a", name, "a recovered")
	require.Equal(t, []string{"a"}, s.take())

	s.set("a", 503)
	step(0, "a", "b")             // a fails: the cool-down starts over at 1s
	step(time.Second+1, "a", "b") // tried after 1s
}

// TestDoTriesTheCoolingUpstreamThatEndsFirst: when every upstream of a
// route cools down, the request is not failed: the upstream whose
// cool-down ends first is tried first.
func TestDoTriesTheCoolingUpstreamThatEndsFirst(t *testing.T) {
	t.Parallel()
	s := &switchable{}
	a := s.server(t, "a", 500)
	b := s.server(t, "b", 200)
	r := newRelay(t, "m", []relay.Upstream{{Name: "a", BaseURL: a}, {Name: "b", BaseURL: b}})
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	relay.SetClock(r, clk.Now)

	doOnce(t, r) // a fails: cools until 1s
	require.Equal(t, []string{"a", "b"}, s.take())
	s.set("b", 500)
	clk.advance(100 * time.Millisecond)
	status, _ := doOnce(t, r) // b fails (until 1.1s), then a, cooling, is tried and fails (until 2.1s)
	require.Zero(t, status)
	require.Equal(t, []string{"b", "a"}, s.take())

	s.set("a", 200)
	s.set("b", 200)
	clk.advance(400 * time.Millisecond) // both cool: b's ends first
	status, name := doOnce(t, r)
	require.Equal(t, 200, status)
	require.Equal(t, "b", name)
	require.Equal(t, []string{"b"}, s.take())
}

// TestDoFailsOverWhenTheUpstreamRefusesTheKey: an upstream that answers
// 401 or 403 refuses the gateway's key for it; the next upstream, with
// its own key, serves, and the refusing one cools down. When every
// upstream refuses, the client gets the 502 that says so.
func TestDoFailsOverWhenTheUpstreamRefusesTheKey(t *testing.T) {
	t.Parallel()
	for _, status := range []int{401, 403} {
		s := &switchable{}
		a := s.server(t, "a", status)
		b := s.server(t, "b", 200)
		r := newRelay(t, "m", []relay.Upstream{{Name: "a", BaseURL: a}, {Name: "b", BaseURL: b}})
		for _, want := range [][]string{{"a", "b"}, {"b"}} {
			code, name := doOnce(t, r)
			require.Equal(t, 200, code)
			require.Equal(t, "b", name)
			require.Equal(t, want, s.take())
		}
		s.set("b", status)
		_, _, err := r.Do(t.Context(), "m", get(t.Context(), "/x"))
		var e *apierrors.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, 502, e.Status)
		require.Contains(t, e.Message, "refused the gateway's credentials")
	}
}
