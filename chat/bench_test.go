package chat_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
)

// The benchmark requests. The JSON one is answered with 61 tokens
// (~600 bytes); the streamed one with 64 chunks (63 one-token content
// chunks and the finish chunk), then [DONE].
const (
	benchJSON   = `{"model":"demo-chat","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchStream = `{"model":"demo-chat","stream":true,"max_tokens":63,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchEvents = 65 // 64 chunks and [DONE]
)

// newBenchStack is the whole stack: auth middleware with an in-memory key
// store, a ServeMux, the chat handler and the demo backend.
func newBenchStack(tb testing.TB) (http.Handler, string) {
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(tb, err)
	require.NoError(tb, keys.Add(tb.Context(), secret, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	mux := http.NewServeMux()
	mux.Handle(chat.Pattern, chat.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Chat()))
	return auth.Middleware(keys)(mux), secret
}

// BenchmarkStack measures the whole stack (auth middleware, decoding,
// validation, model check, demo backend, encoding, usage charge) for a
// JSON reply and for a 64-chunk stream, called in process and over
// loopback HTTP, each beside a raw net/http handler that writes the same
// bytes in the same run. Metrics:
//
//	x-raw          time per request of the stack / time of the raw
//	               handler (run just before, as the …/raw sub-benchmark)
//	raw-allocs/op  allocations per request of the raw handler
//	ns/event       (streams) time per event: per request / 65 events
func BenchmarkStack(b *testing.B) {
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
	}{
		{"JSON", benchJSON, false},
		{"Stream64", benchStream, true},
	} {
		stack, secret := newBenchStack(b)
		// Record the stack's reply: the raw handler writes the same bytes.
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer "+secret)
		stack.ServeHTTP(w, r)
		require.Equal(b, 200, w.Code, w.Body.String())
		if tc.stream {
			require.Equal(b, benchEvents, strings.Count(w.Body.String(), "\n\n"))
		}
		raw := benchstack.Raw(w.Header(), w.Body.Bytes(), tc.stream)

		for _, via := range []struct {
			name string
			run  func(testing.TB, http.Handler) func(testing.TB)
		}{
			{"InProcess", func(_ testing.TB, h http.Handler) func(testing.TB) {
				return benchstack.InProcess(h, "/v1/chat/completions", tc.body, secret)
			}},
			{"HTTP", func(tb testing.TB, h http.Handler) func(testing.TB) {
				return benchstack.OverHTTP(tb, h, "/v1/chat/completions", tc.body, secret)
			}},
		} {
			// The raw handler runs first, as a sub-benchmark of its own
			// (testing.Benchmark cannot run inside a benchmark); the
			// stack's sub-benchmark reports its figures against it.
			var rawNs, rawAllocs float64
			b.Run(tc.name+"/"+via.name+"/raw", func(b *testing.B) {
				do := via.run(b, raw)
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.ResetTimer()
				for range b.N {
					do(b)
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				rawNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				rawAllocs = float64(after.Mallocs-before.Mallocs) / float64(b.N)
				if tc.stream {
					b.ReportMetric(rawNs/benchEvents, "ns/event")
				}
			})
			b.Run(tc.name+"/"+via.name+"/gatewaykit", func(b *testing.B) {
				do := via.run(b, stack)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					do(b)
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if rawNs > 0 {
					b.ReportMetric(ns/rawNs, "x-raw")
					b.ReportMetric(rawAllocs, "raw-allocs/op")
				}
				if tc.stream {
					b.ReportMetric(ns/benchEvents, "ns/event")
				}
			})
		}
	}
}
