package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// TestAccessConcurrentRequestsHoldTheQuota reproduces the overrun of a
// key's quota by concurrent requests on the access points: 20 requests on
// a key of 1000 tokens, all admitted before any is charged. Each reserves
// its estimate (more than 1000 tokens: no max_tokens), so one reaches the
// upstream and the others are refused with 403.
func TestAccessConcurrentRequestsHoldTheQuota(t *testing.T) {
	t.Parallel()
	const requests, budget, cost = 20, 1000, 900
	tests := []struct {
		name, path, body string
		header           map[string]string
	}{
		{name: "Messages", path: "/v1/messages", body: `{"model":"chat-1","messages":[{"role":"user","content":"hi"}]}`, header: map[string]string{"X-Api-Key": "KEY"}},
		{name: "Gemini", path: "/v1beta/models/gem-1:generateContent", body: `{"contents":[{"parts":[{"text":"hi"}]}]}`, header: map[string]string{"X-Goog-Api-Key": "KEY"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			events := make(chan struct{}, requests) // a request reached the upstream, or was refused
			release := make(chan struct{})
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				events <- struct{}{}
				<-release
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"usage":{"total_tokens":%d},"usageMetadata":{"totalTokenCount":%d}}`, cost, cost)
			})
			var routes []relay.Route
			for _, m := range accessModels {
				routes = append(routes, relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: up.srv.URL + "/v1"}}})
			}
			r, err := relay.New(routes)
			require.NoError(t, err)
			keys := auth.NewMemoryKeyStore()
			secret, err := auth.NewSecret()
			require.NoError(t, err)
			require.NoError(t, keys.Add(t.Context(), secret, auth.Key{ID: "k", Quota: auth.LimitedQuota(budget)}))
			mux := http.NewServeMux()
			relay.RegisterAccess(mux, relay.NewAccessHandler(r, models.NewMemoryCatalog(accessModels...)))
			h := auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor))(mux)
			var handlers sync.WaitGroup
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				handlers.Add(1)
				defer handlers.Done()
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)

			statuses := make(chan int, requests)
			var wg sync.WaitGroup
			for range requests {
				wg.Go(func() {
					req, _ := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(tc.body))
					req.Header.Set("Content-Type", "application/json")
					for k, v := range tc.header {
						req.Header.Set(k, strings.ReplaceAll(v, "KEY", secret))
					}
					res, err := srv.Client().Do(req)
					if err != nil {
						t.Errorf("request: %v", err)
						events <- struct{}{}
						return
					}
					if res.StatusCode != http.StatusOK {
						events <- struct{}{}
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					statuses <- res.StatusCode
				})
			}
			for range requests {
				<-events
			}
			close(release)
			wg.Wait()
			srv.Close() // waits for the handlers
			handlers.Wait()
			close(statuses)
			count := map[int]int{}
			for s := range statuses {
				count[s]++
			}
			require.Equal(t, map[int]int{http.StatusOK: 1, http.StatusForbidden: requests - 1}, count)
			k, err := keys.Lookup(context.Background(), secret)
			require.NoError(t, err)
			require.Equal(t, auth.Quota{Remaining: budget - cost, Used: cost}, k.Quota)
		})
	}
}

// TestAccessHugeMaxTokensAreRefused: on the messages access point, a
// max_tokens of 2⁶³−1 made the estimate negative (a 500), and one above
// what an int64 holds was reserved as if absent. Any max_tokens above
// endpoint.MaxOutputTokens is a 400 naming it, with the number cut short,
// and nothing reaches the upstream or is reserved.
func TestAccessHugeMaxTokensAreRefused(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"4611686018427387904", "9223372036854775807", "2147483648", strings.Repeat("9", 1<<20)} {
		t.Run(n[:min(len(n), 20)], func(t *testing.T) {
			t.Parallel()
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"usage":{"input_tokens":1,"output_tokens":1}}`)
			})
			g := newAccessGateway(t, up)
			res := g.post(t, "/v1/messages", "application/json",
				strings.NewReader(`{"model":"chat-1","max_tokens":`+n+`,"messages":[{"role":"user","content":"hi"}]}`),
				map[string]string{"X-Api-Key": keyMetered})
			body := readAll(t, res.Body)
			require.Equal(t, http.StatusBadRequest, res.StatusCode, "%.200s", body)
			require.Less(t, len(body), 400, "the number is cut short")
			var e apierrors.MessagesBody
			require.NoError(t, json.Unmarshal(body, &e), "%s", body)
			require.Equal(t, "invalid_request_error", e.Error.Type)
			require.Equal(t, fmt.Sprintf("max_tokens: must be at most %d, got %s", endpoint.MaxOutputTokens, apierrors.Echo(n)), e.Error.Message)
			require.Zero(t, up.callCount())
		})
	}
}
