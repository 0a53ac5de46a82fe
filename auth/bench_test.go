package auth_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// benchWriter is a ResponseWriter that keeps nothing but its header, which
// each request clears, so that the benchmark counts the middleware's
// allocations and not a recorder's.
type benchWriter struct{ h http.Header }

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *benchWriter) WriteHeader(int)             {}

// BenchmarkMiddleware measures the middleware's cost per admitted request:
// the credential read, the store's lookup, the rate limit and the
// principal put in the context, in front of a handler that reads it.
// Baseline is the handler alone, in the same run.
func BenchmarkMiddleware(b *testing.B) {
	ctx := context.Background()
	const secret = "sk-bench0123456789abcdefABCDEF"
	keys := auth.NewMemoryKeyStore()
	require.NoError(b, keys.Add(ctx, secret, auth.Key{ID: "key_bench", Owner: "acme", Quota: auth.UnlimitedQuota(),
		RateLimit: &auth.Limit{Requests: 1 << 30, Period: 1}}))
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := auth.PrincipalFrom(r.Context()); !ok {
			panic("no principal")
		}
	})
	bench := func(b *testing.B, h http.Handler, header, value string) {
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		r.Header.Set(header, value)
		w := &benchWriter{h: make(http.Header)}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	}
	b.Run("Baseline", func(b *testing.B) {
		bench(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), "Authorization", "Bearer "+secret)
	})
	b.Run("APIKey", func(b *testing.B) {
		bench(b, auth.Middleware(keys)(next), "Authorization", "Bearer "+secret)
	})
	// An embedder's identity (a header naming a key without a secret),
	// asked before API keys, through a CachedKeyStore as in production.
	require.NoError(b, keys.Add(ctx, "", auth.Key{ID: "user_bench", Owner: "acme", Quota: auth.UnlimitedQuota(),
		RateLimit: &auth.Limit{Requests: 1 << 30, Period: 1}}))
	cached := auth.NewCachedKeyStore(keys, time.Hour)
	identify := func(r *http.Request) (string, error) { return r.Header.Get("X-User"), nil }
	b.Run("Identity", func(b *testing.B) {
		mw := auth.Middleware(cached, auth.WithAuthenticators(auth.Identities(cached, identify), auth.APIKeys(cached)))
		bench(b, mw(next), "X-User", "user_bench")
	})
}
