package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
)

// benchChat is the non-streaming request of the load tool's chat scenario,
// answered by the demo backend with 61 tokens (~600 bytes).
const benchChat = `{"model":"demo-chat","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`

// newBenchGateway is the gateway as the load tool wires it: the demo
// configuration and backends, the access log on (its logger discards),
// and a per-key rate limit too high to refuse anything, so that the
// limiter runs for every request.
func newBenchGateway(tb testing.TB) (http.Handler, string) {
	c := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(tb.Context(), c.Keys)
	require.NoError(tb, err)
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(c.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(),
		RateLimit:   auth.Limit{Requests: 1 << 30, Period: time.Second},
		AccessLog:   true,
	})
	require.NoError(tb, err)
	return g, gateway.DemoKeys()[0].Secret
}

// BenchmarkGateway measures non-streaming chat through the whole gateway
// (access log, auth and rate limit, mux, chat handler, demo backend,
// usage charge), called in process and over loopback HTTP, each beside a
// raw net/http handler that writes the same headers and bytes in the same
// run. Metrics:
//
//	x-raw          time per request of the gateway / time of the raw
//	               handler (run just before, as the …/raw sub-benchmark)
//	raw-allocs/op  allocations per request of the raw handler
func BenchmarkGateway(b *testing.B) {
	g, secret := newBenchGateway(b)
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(benchChat))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+secret)
	g.ServeHTTP(w, r)
	require.Equal(b, http.StatusOK, w.Code, w.Body.String())
	raw := benchstack.Raw(w.Header(), w.Body.Bytes(), false)

	for _, via := range []struct {
		name string
		run  func(testing.TB, http.Handler, string) func(testing.TB)
	}{
		{"InProcess", func(_ testing.TB, h http.Handler, secret string) func(testing.TB) {
			return benchstack.InProcess(h, "/v1/chat/completions", benchChat, secret)
		}},
		{"HTTP", func(tb testing.TB, h http.Handler, secret string) func(testing.TB) {
			return benchstack.OverHTTP(tb, h, "/v1/chat/completions", benchChat, secret)
		}},
	} {
		var rawNs, rawAllocs float64
		b.Run("Chat/"+via.name+"/raw", func(b *testing.B) {
			do := via.run(b, raw, secret)
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
		})
		b.Run("Chat/"+via.name+"/gatewaykit", func(b *testing.B) {
			do := via.run(b, g, secret)
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
		})
	}
}
