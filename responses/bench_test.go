package responses_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

// The benchmark requests, as chat's: the JSON one is answered with about
// 60 tokens (~1.1 KB); the streamed one with 63 one-token deltas among 71
// events. Neither is stored, so that the store does not grow with b.N.
const (
	benchJSON   = `{"model":"demo-chat","store":false,"instructions":"You are a helpful assistant.","input":[{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchStream = `{"model":"demo-chat","store":false,"stream":true,"max_output_tokens":63,"instructions":"You are a helpful assistant.","input":[{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
)

// newBenchStack is the whole stack: auth middleware with an in-memory key
// store, a ServeMux, the responses handler and the demo backend.
func newBenchStack(tb testing.TB) (http.Handler, string) {
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(tb, err)
	require.NoError(tb, keys.Add(tb.Context(), secret, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Responses()))
	return auth.Middleware(keys)(mux), secret
}

// BenchmarkStack measures the whole stack (auth middleware, decoding,
// validation, model check, demo backend, encoding, usage charge) for a
// JSON reply and for a 71-event stream, called in process and over
// loopback HTTP, each beside a raw net/http handler that writes the same
// bytes in the same run. Metrics:
//
//	x-raw          time per request of the stack / time of the raw
//	               handler (run just before, as the …/raw sub-benchmark)
//	raw-allocs/op  allocations per request of the raw handler
//	ns/event       (streams) time per event
func BenchmarkStack(b *testing.B) {
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
	}{
		{"JSON", benchJSON, false},
		{"Stream71", benchStream, true},
	} {
		stack, secret := newBenchStack(b)
		// Record the stack's reply: the raw handler writes the same bytes.
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer "+secret)
		stack.ServeHTTP(w, r)
		require.Equal(b, 200, w.Code, w.Body.String())
		events := 1.0
		if tc.stream {
			events = float64(strings.Count(w.Body.String(), "\n\n"))
			require.Equal(b, 71.0, events)
		}
		raw := benchstack.Raw(w.Header(), w.Body.Bytes(), tc.stream)

		for _, via := range []struct {
			name string
			run  func(testing.TB, http.Handler) func(testing.TB)
		}{
			{"InProcess", func(_ testing.TB, h http.Handler) func(testing.TB) {
				return benchstack.InProcess(h, "/v1/responses", tc.body, secret)
			}},
			{"HTTP", func(tb testing.TB, h http.Handler) func(testing.TB) {
				return benchstack.OverHTTP(tb, h, "/v1/responses", tc.body, secret)
			}},
		} {
			// The raw handler runs first, as a sub-benchmark of its own;
			// the stack's sub-benchmark reports its figures against it.
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
					b.ReportMetric(rawNs/events, "ns/event")
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
					b.ReportMetric(ns/events, "ns/event")
				}
			})
		}
	}
}

// BenchmarkConversation measures a request that continues a stored
// conversation of depth earlier turns through previous_response_id, in
// process, with the demo backend: the cost of resolving the chain from
// the in-memory store and of the longer input.
func BenchmarkConversation(b *testing.B) {
	for _, depth := range []int{1, 10, 100} {
		b.Run(fmt.Sprint("depth=", depth), func(b *testing.B) {
			h := responses.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Responses())
			prev := ""
			for i := range depth {
				body := fmt.Sprintf(`{"model":"demo-chat","input":"Turn %d of the conversation."`, i)
				if prev != "" {
					body += `,"previous_response_id":"` + prev + `"`
				}
				w := post(b, h, body+`}`)
				require.Equal(b, 200, w.Code, w.Body.String())
				prev = decode(b, w.Body.String())["id"].(string)
			}
			body := `{"model":"demo-chat","store":false,"input":"And now?","previous_response_id":"` + prev + `"}`
			do := benchstack.InProcess(h, "/v1/responses", body, "")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				do(b)
			}
		})
	}
}
