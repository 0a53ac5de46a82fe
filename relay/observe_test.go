package relay_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	gw "github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/relay"
)

// TestAttemptObserverSeesEachAttempt: the observer sees a failed attempt
// (failing over) and the one that answered, with their upstreams and
// statuses.
func TestAttemptObserverSeesEachAttempt(t *testing.T) {
	t.Parallel()
	s := &switchable{}
	a := s.server(t, "a", 503)
	b := s.server(t, "b", 200)
	var mu sync.Mutex
	var seen []relay.Attempt
	r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{Name: "a", BaseURL: a}, {Name: "b", BaseURL: b}}}},
		relay.WithAttemptObserver(func(ctx context.Context, at relay.Attempt) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, at)
		}))
	require.NoError(t, err)
	status, name := doOnce(t, r)
	require.Equal(t, 200, status)
	require.Equal(t, "b", name)

	require.Len(t, seen, 2)
	require.Equal(t, "a", seen[0].Upstream)
	require.Equal(t, "m", seen[0].Model)
	require.Equal(t, 503, seen[0].Status)
	require.True(t, seen[0].Failover)
	require.Error(t, seen[0].Err)
	require.Equal(t, "b", seen[1].Upstream)
	require.Equal(t, 200, seen[1].Status)
	require.False(t, seen[1].Failover)
	require.NoError(t, seen[1].Err)
}

// TestPing: an idle relay probes its upstreams' model lists and is ready
// if one answers; a relay whose upstream just answered a request does not
// probe; one whose upstreams all fail is not ready.
func TestPing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		statuses []int // of the upstreams, in failover order
		request  bool  // send a request before the Ping
		ok       bool
		probes   int // calls the Ping makes; -1: at least one (an answer cancels the other probes)
	}{
		{"idle, one answers", []int{503, 200}, false, true, -1},
		{"idle, a refusal of the key is no answer", []int{401}, false, false, 1},
		{"idle, a 404 is an answer", []int{404}, false, true, 1},
		{"idle, none answers", []int{500, 502}, false, false, 2},
		{"answered a request just now", []int{200}, true, true, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &switchable{}
			var ups []relay.Upstream
			for i, st := range tc.statuses {
				name := string(rune('a' + i))
				ups = append(ups, relay.Upstream{Name: name, BaseURL: s.server(t, name, st)})
			}
			r, err := relay.New([]relay.Route{{Model: "m", Upstreams: ups}})
			require.NoError(t, err)
			if tc.request {
				status, _ := doOnce(t, r)
				require.Equal(t, http.StatusOK, status)
				s.take()
			}
			err = r.Ping(t.Context())
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, "no upstream answered")
			}
			if tc.probes < 0 {
				require.NotEmpty(t, s.take())
			} else {
				require.Len(t, s.take(), tc.probes)
			}
		})
	}
}

func TestPinger(t *testing.T) {
	gatewaytest.TestPinger(t, func(t *testing.T) gw.Pinger {
		s := &switchable{}
		r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{Name: "a", BaseURL: s.server(t, "a", 200)}}}})
		require.NoError(t, err)
		return r
	})
}
