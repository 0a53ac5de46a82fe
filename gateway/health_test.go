package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/videos"
)

// pinger is a dependency that answers err.
type pinger struct{ err error }

func (p pinger) Ping(context.Context) error { return p.err }

// failingTasks is the memory task store with a database behind it that
// does not answer.
type failingTasks struct {
	videos.TaskStore
}

func (failingTasks) Ping(context.Context) error {
	return errors.New("dial tcp 10.0.0.7:5432: connection refused")
}

// TestHealthAndReadiness: /healthz and /readyz answer without
// credentials; /readyz is 503, in the general error shape and naming
// what failed (never its error text), while a dependency does not answer.
func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	down := errors.New("redis: ping: connection refused")
	tests := []struct {
		name   string
		config func(*gateway.Config)
		method string
		path   string
		status int
		body   string // the status of a 200, or the message of an error
		code   string
	}{
		{"healthz", nil, "GET", "/healthz", 200, "ok", ""},
		{"healthz head", nil, "HEAD", "/healthz", 200, "", ""},
		{"readyz with memory stores", nil, "GET", "/readyz", 200, "ready", ""},
		{"readyz with a check that answers", func(c *gateway.Config) {
			c.ReadyChecks = map[string]gateway.Pinger{"redis": pinger{}}
		}, "GET", "/readyz", 200, "ready", ""},
		{"readyz with a check that fails", func(c *gateway.Config) {
			c.ReadyChecks = map[string]gateway.Pinger{"redis": pinger{down}, "other": pinger{}}
		}, "GET", "/readyz", 503, "Not ready: redis did not answer.", "service_unavailable"},
		{"readyz with a store that fails", func(c *gateway.Config) {
			c.Tasks = failingTasks{videos.NewMemoryStore(nil)}
		}, "GET", "/readyz", 503, "Not ready: video tasks did not answer.", "service_unavailable"},
		{"healthz while not ready", func(c *gateway.Config) {
			c.ReadyChecks = map[string]gateway.Pinger{"redis": pinger{down}}
		}, "GET", "/healthz", 200, "ok", ""},
		{"post", nil, "POST", "/readyz", 405, "The method POST is not allowed on /readyz; use GET or HEAD.", "method_not_allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newDemo(t, tc.config)
			rec := httptest.NewRecorder()
			g.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil)) // no credentials
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			if tc.method == "HEAD" {
				require.Empty(t, rec.Body.String())
				return
			}
			if tc.status == 200 {
				require.JSONEq(t, `{"status":"`+tc.body+`"}`, rec.Body.String())
				return
			}
			var env struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Code    string  `json:"code"`
					Param   *string `json:"param"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
			require.Equal(t, tc.body, env.Error.Message)
			require.Equal(t, tc.code, env.Error.Code)
			require.Nil(t, env.Error.Param)
			require.NotContains(t, rec.Body.String(), "10.0.0.7")
			require.NotContains(t, rec.Body.String(), "connection refused")
		})
	}
}

// sharedTasks is the memory task store with a database behind it that
// every replica shares, which does not answer.
type sharedTasks struct{ failingTasks }

func (sharedTasks) Shared() bool { return true }

// sharedKeys is a key store on a database that every replica shares.
type sharedKeys struct {
	*auth.MemoryKeyStore
	err error
}

func (k sharedKeys) Ping(context.Context) error { return k.err }
func (sharedKeys) Shared() bool                 { return true }

// TestReadinessSeparatesSharedDependencies: a dependency that every
// replica shares does not make the replica unready when it does not
// answer: the 200 names it, so that its outage does not drain the whole
// fleet. A local one still makes the replica unready.
func TestReadinessSeparatesSharedDependencies(t *testing.T) {
	t.Parallel()
	down := errors.New("dial tcp 10.0.0.7:6379: connection refused")
	tests := []struct {
		name   string
		config func(*gateway.Config)
		status int
		body   string
	}{
		{"a shared check that fails", func(c *gateway.Config) {
			c.ReadyChecks = map[string]gateway.Pinger{"redis": gateway.Shared(pinger{down}), "other": pinger{}}
		}, 200, `{"status":"ready","unavailable":["redis"]}`},
		{"a shared check that answers", func(c *gateway.Config) {
			c.ReadyChecks = map[string]gateway.Pinger{"redis": gateway.Shared(pinger{})}
		}, 200, `{"status":"ready"}`},
		{"shared stores that fail, through the key cache", func(c *gateway.Config) {
			c.Keys = auth.NewCachedKeyStore(sharedKeys{auth.NewMemoryKeyStore(), down}, time.Second)
			c.Tasks = sharedTasks{failingTasks{videos.NewMemoryStore(nil)}}
		}, 200, `{"status":"ready","unavailable":["keys","video tasks"]}`},
		{"a shared check and a local one that fail", func(c *gateway.Config) {
			c.ReadyChecks = map[string]gateway.Pinger{"redis": gateway.Shared(pinger{down}), "disk": pinger{down}}
		}, 503, `{"error":{"message":"Not ready: disk, redis did not answer.","type":"server_error","param":null,"code":"service_unavailable"}}`},
		{"a store that says it is not shared", func(c *gateway.Config) {
			c.Keys = auth.NewCachedKeyStore(localKeys{sharedKeys{auth.NewMemoryKeyStore(), down}}, time.Second)
		}, 503, `{"error":{"message":"Not ready: keys did not answer.","type":"server_error","param":null,"code":"service_unavailable"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newDemo(t, tc.config)
			rec := httptest.NewRecorder()
			g.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.JSONEq(t, tc.body, rec.Body.String())
		})
	}
}

// localKeys is a key store whose Shared says false.
type localKeys struct{ sharedKeys }

func (localKeys) Shared() bool { return false }

// TestReadinessOfARelay: with a relay, /readyz probes the upstreams while
// none has answered a request, and is 503 when none answers.
func TestReadinessOfARelay(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	rl, err := relay.New([]relay.Route{{Model: "relayed", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL()}}}})
	require.NoError(t, err)
	g := newDemo(t, func(c *gateway.Config) { c.Relay = rl })

	readyz := func() int {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code
	}
	require.Equal(t, http.StatusOK, readyz())
	require.Equal(t, 1, countPath(up, "/v1/models"), "an idle relay probes its upstream")

	// A relay whose only upstream is down is not ready.
	up2 := relaytest.NewUpstream()
	up2.SetDown(true)
	t.Cleanup(up2.Close)
	rl2, err := relay.New([]relay.Route{{Model: "relayed", Upstreams: []relay.Upstream{{BaseURL: up2.BaseURL()}}}})
	require.NoError(t, err)
	g = newDemo(t, func(c *gateway.Config) { c.Relay = rl2 })
	require.Equal(t, http.StatusServiceUnavailable, readyz())
}

func countPath(up *relaytest.Upstream, path string) int {
	n := 0
	for _, r := range up.Requests() {
		if r.Path == path {
			n++
		}
	}
	return n
}
