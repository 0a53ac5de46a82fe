package metrics_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// BenchmarkChat measures a non-streaming chat request through the demo
// gateway, without and with the metrics middleware, in process: the
// difference is the metrics' cost per request (BENCHMARKS.md).
func BenchmarkChat(b *testing.B) {
	keys, err := gateway.NewKeyStore(context.Background(), gateway.DemoKeys())
	if err != nil {
		b.Fatal(err)
	}
	g, err := gateway.New(gateway.Config{
		Keys:    keys,
		Catalog: models.NewMemoryCatalog(gateway.DemoFile().Models...),
		Chat:    demo.NewTextBackend().Chat(),
	})
	if err != nil {
		b.Fatal(err)
	}
	const body = `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{
		{"off", g},
		{"metrics", metrics.New(prometheus.NewRegistry()).Middleware(g)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer sk-demo")
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				tc.h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
}

// BenchmarkMiddleware measures the middleware alone, around a handler
// that fills the request's telemetry.Info as the gateway does and writes
// a small JSON reply: the metrics' own cost per request.
func BenchmarkMiddleware(b *testing.B) {
	reply := []byte(`{"object":"chat.completion"}`)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := telemetry.FromContext(r.Context()); info != nil {
			info.Route, info.Model = "POST /v1/chat/completions", "demo-chat"
			info.InputTokens, info.OutputTokens = 9, 61
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(reply)
	})
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{
		{"off", next},
		{"metrics", metrics.New(prometheus.NewRegistry()).Middleware(next)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest("POST", "/v1/chat/completions", nil)
			w := discard{h: http.Header{}}
			for b.Loop() {
				tc.h.ServeHTTP(w, req)
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}
