package sse_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"

	"github.com/gatewaykit/gatewaykit/sse"
)

// discardWriter is an http.ResponseWriter that implements Flush and drops
// what it is given, so that the benchmarks measure the stream's own cost.
type discardWriter struct {
	h       http.Header
	written int
}

func newDiscardWriter() *discardWriter { return &discardWriter{h: http.Header{}} }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(int)             {}
func (d *discardWriter) Write(p []byte) (int, error) { d.written += len(p); return len(p), nil }
func (d *discardWriter) Flush()                      {}

// benchChunk is a typical chat.completion.chunk of about 200 bytes.
func benchChunk() chunk {
	c := textChunk("", "Hello, this is one token of a streamed reply.", nil)
	c.Model = "gpt-4o-mini-2024-07-18"
	return c
}

// perEvent reports the cost per event of the loop that b just ran, and the
// ratio to the baseline's ns/event when one was measured in this run.
func perEvent(b *testing.B, before *runtime.MemStats, baseline float64) float64 {
	b.Helper()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(ns, "ns/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N), "allocs/event")
	if baseline > 0 {
		b.ReportMetric(ns/baseline, "x-baseline")
	}
	return ns
}

// Measured figures (go test -run x -bench . -benchmem ./sse/, Go 1.26,
// linux/amd64, 2 shared vCPUs of an Intel Xeon; a ~210-byte chat chunk;
// per event, allocations per event):
//
//	discarding writer with Flush          ns/event  allocs  x-baseline
//	pre-encoded  baseline Fprintf+Flush       65      1
//	pre-encoded  sse SendRaw                 241      1       3.7
//	encode       baseline Marshal+Fprintf    571      2
//	encode       sse Send                    680      1       1.19
//	encode       sse SendJSON (named)        713      1       1.25
//	encode       sse Send, no keep-alive     643      1       1.13
//
//	HTTP/1.1 over loopback (BenchmarkEventHTTP)
//	pre-encoded  baseline Fprintf+Flush     2126      1
//	pre-encoded  sse SendRaw                2466      1       1.16
//
// Where the extra ~175 ns of SendRaw goes (pprof): about half is
// gosse.Message.AppendData scanning the data byte by byte for line breaks,
// ~20-40 ns is time.Now for the keep-alive clock (the "no keep-alive" row),
// and the one allocation per event is the chunk slice of gosse.Message,
// which cannot be reused; the rest is the lock, the context check and the
// frame copy. The baseline's allocation is Fprintf boxing its argument.
// Send encodes into a reused buffer and allocates nothing of its own.
// Reading (BenchmarkRead) costs ~435 ns and 2 allocations per event.

// BenchmarkEvent compares the cost of writing one event through a Stream
// with a raw net/http handler that writes fmt.Fprintf(w, "data: %s\n\n", b)
// and flushes, on a discarding writer that implements Flush, in the same
// run. The "pre-encoded" pair passes JSON bytes through (the relay); the
// "encode" pair also encodes a chat chunk (json.Marshal in the baseline).
// x-baseline is ns/event divided by that of the baseline of the pair.
func BenchmarkEvent(b *testing.B) {
	c := benchChunk()
	payload, err := json.Marshal(c)
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)

	var rawNs, marshalNs float64
	b.Run("pre-encoded/baseline-fprintf", func(b *testing.B) {
		w := newDiscardWriter()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			fmt.Fprintf(w, "data: %s\n\n", payload)
			w.Flush()
		}
		rawNs = perEvent(b, &before, 0)
	})
	b.Run("pre-encoded/sse-SendRaw", func(b *testing.B) {
		w := newDiscardWriter()
		s, err := sse.Start(w, req)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if err := s.SendRaw("", payload); err != nil {
				b.Fatal(err)
			}
		}
		perEvent(b, &before, rawNs)
	})
	b.Run("encode/baseline-marshal-fprintf", func(b *testing.B) {
		w := newDiscardWriter()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			p, err := json.Marshal(&c)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(w, "data: %s\n\n", p)
			w.Flush()
		}
		marshalNs = perEvent(b, &before, 0)
	})
	b.Run("encode/sse-Send", func(b *testing.B) {
		w := newDiscardWriter()
		s, err := sse.Start(w, req)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if err := s.Send(&c); err != nil {
				b.Fatal(err)
			}
		}
		perEvent(b, &before, marshalNs)
	})
	b.Run("encode/sse-SendJSON-named", func(b *testing.B) {
		w := newDiscardWriter()
		s, err := sse.Start(w, req)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if err := s.SendJSON("response.output_text.delta", &c); err != nil {
				b.Fatal(err)
			}
		}
		perEvent(b, &before, marshalNs)
	})
	b.Run("encode/sse-Send-no-keepalive", func(b *testing.B) {
		w := newDiscardWriter()
		s, err := sse.Start(w, req, sse.WithKeepAlive(0))
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		for b.Loop() {
			if err := s.Send(&c); err != nil {
				b.Fatal(err)
			}
		}
		perEvent(b, &before, marshalNs)
	})
}

// BenchmarkRead measures reading a stream of chat chunks back with Read.
func BenchmarkRead(b *testing.B) {
	payload, err := json.Marshal(benchChunk())
	if err != nil {
		b.Fatal(err)
	}
	var stream []byte
	const events = 1000
	for range events {
		stream = fmt.Appendf(stream, "data: %s\n\n", payload)
	}
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		n := 0
		for _, err := range sse.Read(bytes.NewReader(stream)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != events {
			b.Fatalf("read %d events, want %d", n, events)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
}

// BenchmarkEventHTTP is BenchmarkEvent's pre-encoded pair over a real
// HTTP/1.1 connection on loopback: one request whose handler writes b.N
// events, each flushed, while the client reads them. It shows the stream's
// overhead next to what a flush costs on a socket. Allocations include the
// client's and the server's.
func BenchmarkEventHTTP(b *testing.B) {
	payload, err := json.Marshal(benchChunk())
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, write func(w http.ResponseWriter, r *http.Request, n int)) float64 {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, _ := strconv.Atoi(r.URL.Query().Get("n"))
			write(w, r, n)
		}))
		defer srv.Close()
		client := srv.Client()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ResetTimer()
		res, err := client.Get(srv.URL + "?n=" + strconv.Itoa(b.N))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		b.StopTimer()
		return perEvent(b, &before, 0)
	}
	var baseline float64
	b.Run("baseline-fprintf", func(b *testing.B) {
		baseline = run(b, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for range n {
				fmt.Fprintf(w, "data: %s\n\n", payload)
				f.Flush()
			}
		})
	})
	b.Run("sse-SendRaw", func(b *testing.B) {
		ns := run(b, func(w http.ResponseWriter, r *http.Request, n int) {
			s, err := sse.Start(w, r)
			if err != nil {
				b.Error(err)
				return
			}
			defer s.Close()
			for range n {
				if err := s.SendRaw("", payload); err != nil {
					b.Error(err)
					return
				}
			}
		})
		if baseline > 0 {
			b.ReportMetric(ns/baseline, "x-baseline")
		}
	})
}

// flushCounter is a discarding ResponseWriter that counts the calls that
// reach the connection in net/http: writes and flushes.
type flushCounter struct {
	discardWriter
	writes, flushes int
}

func (f *flushCounter) Write(p []byte) (int, error) { f.writes++; return len(p), nil }
func (f *flushCounter) Flush()                      { f.flushes++ }

// BenchmarkStream measures a whole chat stream as a handler writes it:
// Start, 64 pre-encoded chunks and the usage chunk (SendRaw), Done and
// Close, with the default keep-alive. It shows what each stream costs on
// top of its events (the keep-alive timer, the first write with the
// headers). writes/stream and flushes/stream count the calls into the
// ResponseWriter: each flush is a write system call on a real connection,
// and so is each write that follows a flush (net/http buffers the writes
// that come before the next flush).
func BenchmarkStream(b *testing.B) {
	payload, err := json.Marshal(benchChunk())
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	w := &flushCounter{discardWriter: *newDiscardWriter()}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		s, err := sse.Start(w, req)
		if err != nil {
			b.Fatal(err)
		}
		for range 65 {
			if err := s.SendRaw("", payload); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Done(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(w.writes)/float64(b.N), "writes/stream")
	b.ReportMetric(float64(w.flushes)/float64(b.N), "flushes/stream")
}

// BenchmarkStreamCoalesced is BenchmarkStream with the chunks written as
// one burst (WriteRaw, then the usage chunk with SendRaw, which flushes
// them all), as a handler does when its backend says that more deltas are
// at hand: two flushes per stream instead of one per event.
func BenchmarkStreamCoalesced(b *testing.B) {
	payload, err := json.Marshal(benchChunk())
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
	w := &flushCounter{discardWriter: *newDiscardWriter()}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		s, err := sse.Start(w, req)
		if err != nil {
			b.Fatal(err)
		}
		for range 64 {
			if err := s.WriteRaw("", payload); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.SendRaw("", payload); err != nil {
			b.Fatal(err)
		}
		if err := s.Done(); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(w.writes)/float64(b.N), "writes/stream")
	b.ReportMetric(float64(w.flushes)/float64(b.N), "flushes/stream")
}
