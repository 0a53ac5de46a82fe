package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/outagetest"
	"github.com/gatewaykit/gatewaykit/store/postgres/pgtest"
)

// serve sends one request with sk-demo to h.
func serve(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer sk-demo")
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAnUnreachableDatabaseIsAnOutage opens the example server's stores on
// a real database, then takes the database away: a SQLite file closed
// under the gateway, a PostgreSQL server behind a proxy that is cut (its
// connections closed, new ones refused). Every route that needs the
// database answers 503 service_unavailable with Retry-After in its
// family's shape.
func TestAnUnreachableDatabaseIsAnOutage(t *testing.T) {
	tests := []struct {
		name string
		open func(t *testing.T) (st *stores, cut func())
	}{
		{"SQLiteClosed", func(t *testing.T) (*stores, func()) {
			st, err := openStores(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "gateway.db"), slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			return st, func() { require.NoError(t, st.close()) }
		}},
		{"PostgresUnreachable", func(t *testing.T) (*stores, func()) {
			u, err := url.Parse(pgtest.NewDatabase(t)) // skips without PostgreSQL
			require.NoError(t, err)
			proxy := outagetest.New(t, u.Host)
			u.Host = proxy.Addr()
			st, err := openStores(t.Context(), u.String(), slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.close() })
			return st, proxy.Cut
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, cut := tc.open(t)
			// One gateway looks its keys up in the database; the other
			// keeps them in memory, so that its requests reach the other
			// stores.
			dbKeys := *st
			dbKeys.keys = st.putter.(auth.KeyStore)
			memKeys := *st
			keys := auth.NewMemoryKeyStore()
			memKeys.keys, memKeys.putter = keys, keys
			logger := slog.New(slog.DiscardHandler)
			lookups, err := newGateway(gateway.DemoFile(), &dbKeys, logger)
			require.NoError(t, err)
			g, err := newGateway(gateway.DemoFile(), &memKeys, logger)
			require.NoError(t, err)

			video := `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`
			w := serve(t, g, "POST", "/v1/videos", video)
			require.Equal(t, http.StatusOK, w.Code, "body: %s", w.Body)
			var task struct{ ID string }
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &task))
			require.Equal(t, http.StatusOK, serve(t, lookups, "GET", "/v1/videos/"+task.ID, "").Code)

			cut()
			for _, rc := range []struct {
				name   string
				h      http.Handler
				method string
				path   string
				body   string
				shape  string // general, content or flat
			}{
				{"key lookup", lookups, "GET", "/v1/models", "", "general"},
				{"task status", g, "GET", "/v1/videos/" + task.ID, "", "content"},
				{"task list", g, "GET", "/v1/videos", "", "content"},
				{"content", g, "GET", "/v1/videos/" + task.ID + "/content", "", "content"},
				{"task delete", g, "DELETE", "/v1/videos/" + task.ID, "", "content"},
				{"video create", g, "POST", "/v1/videos", video, "flat"},
				{"stored response", g, "GET", "/v1/responses/resp_1", "", "general"},
				{"input items", g, "GET", "/v1/responses/resp_1/input_items", "", "general"},
				{"previous_response_id", g, "POST", "/v1/responses", `{"model":"demo-chat","input":"hi","previous_response_id":"resp_1"}`, "general"},
			} {
				w := serve(t, rc.h, rc.method, rc.path, rc.body)
				require.Equal(t, http.StatusServiceUnavailable, w.Code, "%s: %s", rc.name, w.Body)
				require.Equal(t, "2", w.Header().Get("Retry-After"), rc.name)
				var body struct {
					Code  *string        // the flat shape's
					Error map[string]any // param: all but the content shape's
				}
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), rc.name)
				require.Equal(t, "service_unavailable", body.Error["code"], rc.name)
				require.Equal(t, rc.shape == "flat", body.Code != nil, "%s: %s", rc.name, w.Body)
				_, param := body.Error["param"]
				require.Equal(t, rc.shape != "content", param, "%s: %s", rc.name, w.Body)
			}
		})
	}
}

// downLimiter is a rate limiter whose Redis cannot be reached.
type downLimiter struct{}

func (downLimiter) Allow(context.Context, string, auth.Limit) (auth.Decision, error) {
	return auth.Decision{}, errors.New("redis: connection refused")
}

// TestRedisFailFlag: -redis-fail open serves requests while the limiter
// fails, -redis-fail closed refuses them with 503 and Retry-After.
func TestRedisFailFlag(t *testing.T) {
	for flag, want := range map[string]int{"open": http.StatusOK, "closed": http.StatusServiceUnavailable} {
		t.Run(flag, func(t *testing.T) {
			st := newMemoryStores()
			st.limiter = downLimiter{}
			require.NoError(t, st.limiterFailure.UnmarshalText([]byte(flag)))
			c := gateway.DemoFile()
			c.RateLimit = auth.PerMinute(100)
			g, err := newGateway(c, st, slog.New(slog.DiscardHandler))
			require.NoError(t, err)
			w := serve(t, g, "GET", "/v1/models", "")
			require.Equal(t, want, w.Code, "body: %s", w.Body)
		})
	}
}
