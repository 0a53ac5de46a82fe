package gateway_test

import (
	"bytes"
	"context"
	"io"
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

// rawHandler writes header and body after reading the request body, as a
// hand-written net/http handler would: the floor.
func rawHandler(header http.Header, body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		for k, v := range header {
			h[k] = v
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
}

// discardWriter is a ResponseWriter that throws the reply away.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

type bodyReader struct{ *bytes.Reader }

func (bodyReader) Close() error { return nil }

// inProcess serves one request to h by calling ServeHTTP, reusing the
// request and the writer.
func inProcess(_ testing.TB, h http.Handler, secret string) func(testing.TB) {
	rd := &bytes.Reader{}
	r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/v1/chat/completions", nil)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+secret)
	w := &discardWriter{h: make(http.Header)}
	return func(testing.TB) {
		rd.Reset([]byte(benchChat))
		r.Body = bodyReader{rd}
		r.ContentLength = int64(len(benchChat))
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// overHTTP sends one request to a loopback server running h, with a
// keep-alive client, and reads the whole reply.
func overHTTP(tb testing.TB, h http.Handler, secret string) func(testing.TB) {
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	client := srv.Client()
	url := srv.URL + "/v1/chat/completions"
	return func(tb testing.TB) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(benchChat))
		if err != nil {
			tb.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			tb.Fatalf("status %d", res.StatusCode)
		}
	}
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
	raw := rawHandler(w.Header(), w.Body.Bytes())

	for _, via := range []struct {
		name string
		run  func(testing.TB, http.Handler, string) func(testing.TB)
	}{
		{"InProcess", inProcess},
		{"HTTP", overHTTP},
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
