// Package benchstack is the harness of the whole-stack benchmarks (chat,
// responses, gateway): the floor they are compared with — a raw net/http
// handler that writes the very bytes the stack answered — and two ways
// to serve one request, in process (what the code costs) and over
// loopback HTTP with a keep-alive client (what a client sees).
package benchstack

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

// Raw returns the floor: a handler that reads the request body and writes
// header and body, as a hand-written net/http handler would — the JSON
// reply in one write, or, when stream is set, each SSE event of body with
// its own write and flush.
func Raw(header http.Header, body []byte, stream bool) http.Handler {
	var events [][]byte
	if stream {
		for ev := range bytes.SplitAfterSeq(body, []byte("\n\n")) {
			events = append(events, ev)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		for k, v := range header {
			h[k] = v
		}
		w.WriteHeader(http.StatusOK)
		if !stream {
			_, _ = w.Write(body)
			return
		}
		f := w.(http.Flusher)
		for _, ev := range events {
			_, _ = w.Write(ev)
			f.Flush()
		}
	})
}

// discardWriter is a ResponseWriter that throws the reply away.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}

type bodyReader struct{ *bytes.Reader }

func (bodyReader) Close() error { return nil }

// InProcess returns a function that serves one POST of body to path on h
// by calling ServeHTTP directly, with the API key secret, reusing the
// request and a writer that discards the reply.
func InProcess(h http.Handler, path, body, secret string) func(testing.TB) {
	rd := &bytes.Reader{}
	r := httptest.NewRequest(http.MethodPost, path, nil)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+secret)
	w := &discardWriter{h: make(http.Header)}
	return func(testing.TB) {
		rd.Reset([]byte(body))
		r.Body = bodyReader{rd}
		r.ContentLength = int64(len(body))
		clear(w.h)
		h.ServeHTTP(w, r)
	}
}

// OverHTTP returns a function that POSTs body to path on a loopback
// server running h, with a keep-alive client and the API key secret, and
// reads the whole reply; a status other than 200 fails the benchmark.
// The server is closed when tb's test ends.
func OverHTTP(tb testing.TB, h http.Handler, path, body, secret string) func(testing.TB) {
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	client := srv.Client()
	url := srv.URL + path
	return func(tb testing.TB) {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
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

// Compare benchmarks stack beside the floor for one request, a POST of
// body to path with the API key secret. It records stack's reply (which
// must be a 200), hands it to check when check is not nil (to pin the
// reply's size, say), builds [Raw] from it, and runs four sub-benchmarks:
// name/InProcess/raw, name/InProcess/gatewaykit, name/HTTP/raw and
// name/HTTP/gatewaykit. The raw ones run first (testing.Benchmark cannot
// run inside a benchmark), and each gatewaykit one reports against its
// raw twin:
//
//	x-raw          time per request of the stack / time of the raw handler
//	raw-allocs/op  allocations per request of the raw handler
//	ns/event       (a text/event-stream reply) time per request / events
func Compare(b *testing.B, name string, stack http.Handler, path, body, secret string, check func(testing.TB, *httptest.ResponseRecorder)) {
	b.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+secret)
	stack.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("%s: status %d: %s", name, w.Code, w.Body)
	}
	if check != nil {
		check(b, w)
	}
	stream := strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	events := float64(strings.Count(w.Body.String(), "\n\n"))
	raw := Raw(w.Header(), w.Body.Bytes(), stream)

	for _, via := range []struct {
		name string
		run  func(testing.TB, http.Handler) func(testing.TB)
	}{
		{"InProcess", func(_ testing.TB, h http.Handler) func(testing.TB) { return InProcess(h, path, body, secret) }},
		{"HTTP", func(tb testing.TB, h http.Handler) func(testing.TB) { return OverHTTP(tb, h, path, body, secret) }},
	} {
		var rawNs, rawAllocs float64
		b.Run(name+"/"+via.name+"/raw", func(b *testing.B) {
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
			if stream {
				b.ReportMetric(rawNs/events, "ns/event")
			}
		})
		b.Run(name+"/"+via.name+"/gatewaykit", func(b *testing.B) {
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
			if stream {
				b.ReportMetric(ns/events, "ns/event")
			}
		})
	}
}
