package redis_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/outagetest"
	"github.com/gatewaykit/gatewaykit/store/redis"
	"github.com/gatewaykit/gatewaykit/store/redis/redistest"
)

// TestARedisOutage: when the Redis server of the limiter can no longer be
// reached, the auth middleware serves requests without a rate limit by
// default, counting each failure, and refuses them with 503 and
// Retry-After when it fails closed. Quota is still the key store's.
func TestARedisOutage(t *testing.T) {
	c, prefix := redistest.NewClient(t) // skips without Redis
	for _, tc := range []struct {
		failure auth.LimiterFailure
		status  int
		retry   string
	}{{auth.FailOpen, http.StatusOK, ""}, {auth.FailClosed, http.StatusServiceUnavailable, "2"}} {
		t.Run(tc.failure.String(), func(t *testing.T) {
			proxy := outagetest.New(t, c.Options().Addr)
			rc := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), DB: c.Options().DB, MaxRetries: -1})
			t.Cleanup(func() { rc.Close() })
			keys := auth.NewMemoryKeyStore()
			secret, err := auth.NewSecret()
			require.NoError(t, err)
			require.NoError(t, keys.Add(t.Context(), secret, auth.Key{ID: "key_" + tc.failure.String(), Quota: auth.LimitedQuota(0)}))
			var failures atomic.Int64
			h := auth.Middleware(keys,
				auth.WithLimiter(redis.NewLimiter(rc, &redis.Options{Prefix: prefix})),
				auth.WithDefaultRateLimit(auth.PerMinute(100)),
				auth.WithLimiterFailure(tc.failure),
				auth.WithLimiterErrorObserver(func(context.Context, error) { failures.Add(1) }),
			)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
			do := func(method string) *httptest.ResponseRecorder {
				r := httptest.NewRequest(method, "/v1/videos", nil)
				r.Header.Set("Authorization", "Bearer "+secret)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}

			w := do(http.MethodGet)
			require.Equal(t, http.StatusOK, w.Code, "body: %s", w.Body)
			require.Equal(t, "99", w.Header().Get(auth.HeaderRemainingRequests), "Redis counts while it answers")

			proxy.Cut()
			w = do(http.MethodGet)
			require.Equal(t, tc.status, w.Code, "body: %s", w.Body)
			require.Equal(t, tc.retry, w.Header().Get("Retry-After"))
			require.Empty(t, w.Header().Get(auth.HeaderRemainingRequests), "no decision, no headers")
			require.EqualValues(t, 1, failures.Load())

			w = do(http.MethodPost)
			require.Equal(t, http.StatusForbidden, w.Code, "the key's spent quota is still refused: body: %s", w.Body)
		})
	}
}
