package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
)

// downLimiter is a rate limiter whose Redis cannot be reached.
type downLimiter struct{}

func (downLimiter) Allow(context.Context, string, auth.Limit) (auth.Decision, error) {
	return auth.Decision{}, errors.New("redis: dial tcp 10.0.0.6:6379: connect: connection refused")
}

// TestRateLimiterErrorsAreCounted: each request that meets a failing
// limiter is counted, whether the gateway serves it (failing open, the
// default) or refuses it (failing closed).
func TestRateLimiterErrorsAreCounted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		failure auth.LimiterFailure
		status  int
	}{{auth.FailOpen, http.StatusOK}, {auth.FailClosed, http.StatusServiceUnavailable}} {
		t.Run(tc.failure.String(), func(t *testing.T) {
			t.Parallel()
			reg := prometheus.NewRegistry()
			m := metrics.New(reg)
			f := gateway.DemoFile()
			keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
			require.NoError(t, err)
			g, err := gateway.New(gateway.Config{
				Keys: keys, Catalog: models.NewMemoryCatalog(f.Models...),
				RateLimit: auth.PerMinute(100),
				AuthOptions: []auth.Option{auth.WithLimiter(downLimiter{}), auth.WithLimiterFailure(tc.failure),
					auth.WithLimiterErrorObserver(m.ObserveLimiterError)},
			})
			require.NoError(t, err)
			h := m.Middleware(g)
			for range 2 {
				r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
				r.Header.Set("Authorization", "Bearer sk-demo")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				require.Equal(t, tc.status, w.Code, "body: %s", w.Body)
			}
			require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP gatewaykit_rate_limiter_errors_total Requests whose rate limiter (Redis, say) failed: served without a rate limit, or refused with 503, as the gateway is set.
# TYPE gatewaykit_rate_limiter_errors_total counter
gatewaykit_rate_limiter_errors_total 2
`), "gatewaykit_rate_limiter_errors_total"))
		})
	}
}
