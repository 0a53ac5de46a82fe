package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/sse"
)

// The benchmarks compare, in one run, a client calling a fake upstream
// directly with the same client calling a gateway (auth middleware,
// ForwardHeaders, the chat handler and the relay's backend) in front of
// the same upstream, over loopback HTTP with keep-alive connections. The
// upstream answers from pre-encoded bytes, so that its own cost is as
// small as a real service's reply is fast: the JSON reply of a chat
// completion (~600 bytes), or a stream of 64 chunks (the role chunk, 62
// one-word content chunks, the finish chunk), the usage chunk and
// [DONE]. The model "bench-long" streams 512 chunks instead.
const (
	benchJSONRequest       = `{"model":"bench","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchStreamRequest     = `{"model":"bench","stream":true,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchLongStreamRequest = `{"model":"bench-long","stream":true,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchChunks            = 64
	benchLongChunks        = 512
)

// benchEvents returns the events of a stream of n chunks (n-2 one-word
// content chunks between the role and the finish chunks), the usage
// chunk and [DONE], each as it is written.
func benchEvents(n int) [][]byte {
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog ", n/9+1))[:n-2]
	var events [][]byte
	chunk := func(delta string, finish string) {
		f := "null"
		if finish != "" {
			f = `"` + finish + `"`
		}
		events = append(events, fmt.Appendf(nil, `data: {"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, f))
	}
	chunk(`{"role":"assistant","content":""}`, "")
	for i, w := range words {
		if i > 0 {
			w = " " + w
		}
		d, _ := json.Marshal(map[string]string{"content": w})
		chunk(string(d), "")
	}
	chunk(`{}`, "stop")
	events = append(events, fmt.Appendf(nil, `data: {"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"bench","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", len(words), 20+len(words)))
	return append(events, []byte("data: [DONE]\n\n"))
}

// benchUpstream answers chat completions from pre-encoded bytes, writing
// and flushing each event of a stream on its own, as a model server does.
func benchUpstream(tb testing.TB) *httptest.Server {
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog ", 7))[:benchChunks-2]
	reply, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-up", "object": "chat.completion", "created": 1, "model": "bench",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": strings.Join(words, " ")}}},
		"usage": map[string]any{"prompt_tokens": 20, "completion_tokens": len(words), "total_tokens": 20 + len(words)},
	})
	short, long := benchEvents(benchChunks), benchEvents(benchLongChunks)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := w.Header()
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			h["Content-Type"] = []string{"application/json"}
			w.Write(reply)
			return
		}
		h["Content-Type"] = []string{"text/event-stream"}
		h["Cache-Control"] = []string{"no-cache"}
		events := short
		if bytes.Contains(body, []byte(`"model":"bench-long"`)) {
			events = long
		}
		f := w.(http.Flusher)
		for _, ev := range events {
			w.Write(ev)
			f.Flush()
		}
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// benchGateway is a gateway relaying the model "bench" to up.
func benchGateway(tb testing.TB, up *httptest.Server) *httptest.Server {
	ups := []relay.Upstream{{BaseURL: up.URL + "/v1", Key: upstreamKey}}
	r, err := relay.New([]relay.Route{{Model: "bench", Upstreams: ups}, {Model: "bench-long", Upstreams: ups}})
	require.NoError(tb, err)
	keys := auth.NewMemoryKeyStore()
	require.NoError(tb, keys.Add(tb.Context(), clientKey, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	catalog := models.NewMemoryCatalog(
		models.Model{ID: "bench", EndpointTypes: []models.EndpointType{models.Compat}},
		models.Model{ID: "bench-long", EndpointTypes: []models.EndpointType{models.Compat}})
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
	srv := httptest.NewServer(auth.Middleware(keys)(relay.ForwardHeaders(mux)))
	tb.Cleanup(srv.Close)
	return srv
}

// benchNaive is the floor of any relay, in front of up: one
// httputil.ReverseProxy hop that flushes every write, without auth,
// decoding or accounting.
func benchNaive(tb testing.TB, up *httptest.Server) *httptest.Server {
	u, err := url.Parse(up.URL)
	require.NoError(tb, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex() // see bench/server.go
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// benchClient sends body to url's chat completions and reads the whole
// reply.
type benchClient struct {
	client *http.Client
	url    string
}

func (c benchClient) do(tb testing.TB, body string) {
	c.timed(tb, body, time.Now())
}

// timed is do, and returns the time from start to the first byte of the
// reply's body.
func (c benchClient) timed(tb testing.TB, body string, start time.Time) (ttfb time.Duration) {
	req, err := http.NewRequest(http.MethodPost, c.url+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header["Authorization"] = []string{"Bearer " + clientKey}
	req.Header["Content-Type"] = []string{"application/json"}
	res, err := c.client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	var first [1]byte
	n, err := io.ReadFull(res.Body, first[:])
	ttfb = time.Since(start)
	if err == nil {
		var rest int64
		rest, err = io.Copy(io.Discard, res.Body)
		n += int(rest)
	}
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || n == 0 {
		tb.Fatalf("status %d, %d bytes, %v", res.StatusCode, n, err)
	}
	return ttfb
}

// BenchmarkRelay measures each shape of request, directly and through the
// gateway, and reports the latency percentiles of each (p50-µs, p99-µs)
// beside the usual ns/op and allocs/op (of the whole process: client,
// gateway and upstream); for streams also ns/event.
func BenchmarkRelay(b *testing.B) {
	up := benchUpstream(b)
	gw := benchGateway(b, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	for _, shape := range []struct {
		name string
		body string
	}{
		{"JSON", benchJSONRequest},
		{"Stream64", benchStreamRequest},
	} {
		for _, target := range []struct {
			name string
			url  string
		}{
			{"Direct", up.URL},
			{"Gateway", gw.URL},
		} {
			b.Run(shape.name+"/"+target.name, func(b *testing.B) {
				c := benchClient{client: client, url: target.url}
				c.do(b, shape.body) // warm the connections
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					start := time.Now()
					c.do(b, shape.body)
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
				if shape.name == "Stream64" {
					b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/(benchChunks+2), "p50-ns/event")
				}
			})
		}
	}
}

// BenchmarkRelayAdded sends, in each iteration, the same request
// directly, through a naive relay (benchNaive) and through the gateway,
// so that all three see the same load on a shared machine, and reports
// the latency the gateway adds: the medians and p99 of each, their
// differences (added-p50-µs, added-p99-µs), the ratio of the medians to
// the direct one (ratio-p50; naive-ratio-p50 for the naive relay), and
// the gateway's to the naive relay's (ratio-naive-p50); for streams also
// the median cost per event of each, and the time that the gateway and
// the naive relay add to the first byte of the reply.
func BenchmarkRelayAdded(b *testing.B) {
	up := benchUpstream(b)
	gw := benchGateway(b, up)
	nv := benchNaive(b, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	direct := benchClient{client: client, url: up.URL}
	naive := benchClient{client: client, url: nv.URL}
	gateway := benchClient{client: client, url: gw.URL}
	for _, shape := range []struct {
		name string
		body string
	}{
		{"JSON", benchJSONRequest},
		{"Stream64", benchStreamRequest},
	} {
		b.Run(shape.name, func(b *testing.B) {
			direct.do(b, shape.body)
			naive.do(b, shape.body)
			gateway.do(b, shape.body)
			var d, n, g, dt, nt, gt []time.Duration // latency, and to the first byte
			timed := func(l, first *[]time.Duration, c benchClient) {
				start := time.Now()
				ttfb := c.timed(b, shape.body, start)
				*l, *first = append(*l, time.Since(start)), append(*first, ttfb)
			}
			for b.Loop() {
				timed(&d, &dt, direct)
				timed(&n, &nt, naive)
				timed(&g, &gt, gateway)
			}
			for _, l := range [][]time.Duration{d, n, g, dt, nt, gt} {
				slices.Sort(l)
			}
			pct := func(l []time.Duration, p int) float64 { return float64(l[len(l)*p/100].Nanoseconds()) / 1e3 }
			b.ReportMetric(pct(d, 50), "direct-p50-µs")
			b.ReportMetric(pct(n, 50), "naive-p50-µs")
			b.ReportMetric(pct(g, 50), "gateway-p50-µs")
			b.ReportMetric(pct(g, 50)-pct(d, 50), "added-p50-µs")
			b.ReportMetric(pct(g, 99)-pct(d, 99), "added-p99-µs")
			b.ReportMetric(pct(g, 50)/pct(d, 50), "ratio-p50")
			b.ReportMetric(pct(n, 50)/pct(d, 50), "naive-ratio-p50")
			b.ReportMetric(pct(g, 50)/pct(n, 50), "ratio-naive-p50")
			if shape.name == "Stream64" {
				b.ReportMetric(pct(d, 50)*1e3/(benchChunks+2), "direct-ns/event")
				b.ReportMetric(pct(g, 50)*1e3/(benchChunks+2), "gateway-ns/event")
				b.ReportMetric(pct(gt, 50)-pct(dt, 50), "added-ttfb-p50-µs")
				b.ReportMetric(pct(nt, 50)-pct(dt, 50), "naive-added-ttfb-p50-µs")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkRelayPerEvent measures the cost of one more event in a stream:
// in each iteration a 64-chunk and a 512-chunk stream, directly and
// through the gateway, and the median of each. The difference between
// the long and the short stream's medians, over the 448 events between
// them, is the cost per event without the request's fixed cost (auth,
// decoding, the second connection, the reply's head), which
// BenchmarkRelayAdded's JSON figures measure. It reports that marginal
// cost directly (direct-ns/event), through the naive relay
// (naive-ns/event) and through the gateway (gateway-ns/event), and
// their ratios; handsse-ratio is that of an experiment, a relay that
// reads the events by hand instead of with go-sse (see HandSSERelay).
func BenchmarkRelayPerEvent(b *testing.B) {
	up := benchUpstream(b)
	gw := benchGateway(b, up)
	nv := benchNaive(b, up)
	hand := httptest.NewServer(relay.HandSSERelay(up.URL))
	b.Cleanup(hand.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	targets := []benchClient{{client, up.URL}, {client, nv.URL}, {client, gw.URL}, {client, hand.URL}} // direct, naive, gateway, by hand
	var lat [4][2][]time.Duration                                                                      // target, short or long
	for b.Loop() {
		for i, c := range targets {
			for j, body := range []string{benchStreamRequest, benchLongStreamRequest} {
				start := time.Now()
				c.do(b, body)
				lat[i][j] = append(lat[i][j], time.Since(start))
			}
		}
	}
	var perEvent [4]float64
	for i := range lat {
		var p50 [2]float64
		for j, l := range lat[i] {
			slices.Sort(l)
			p50[j] = float64(l[len(l)/2].Nanoseconds())
		}
		perEvent[i] = (p50[1] - p50[0]) / (benchLongChunks - benchChunks)
	}
	d, n, g := perEvent[0], perEvent[1], perEvent[2]
	b.ReportMetric(d, "direct-ns/event")
	b.ReportMetric(n, "naive-ns/event")
	b.ReportMetric(g, "gateway-ns/event")
	b.ReportMetric(g/d, "ratio")
	b.ReportMetric(n/d, "naive-ratio")
	b.ReportMetric(g/n, "ratio-naive")
	b.ReportMetric(perEvent[3]/d, "handsse-ratio")
	b.ReportMetric(0, "ns/op")
}

// discardWriter is an http.ResponseWriter and http.Flusher that drops
// what is written, and counts the flushes.
type discardWriter struct {
	header  http.Header
	flushes int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      { w.flushes++ }

// BenchmarkRelayStreamInProcess measures the CPU that a relayed stream
// costs per event, without sockets: the upstream's 512-chunk stream comes
// from memory (relay.WithTransport) and the client's side is a writer
// that drops the bytes, so that only the gateway's own work is timed,
// on one goroutine's worth of CPU and unaffected by the scheduling of
// three processes on two cores. Beside it, in the same run: Copy, the
// least a relay can do (io.Copy of the body, flushed per read); SSE,
// the upstream's events read with package sse and written again by hand,
// flushed per event; and SSEStream, the events read with package sse and
// written with sse.Stream.WriteRaw, one flush at the end: the floor of
// any relay built on go-sse that checks and rewrites nothing.
func BenchmarkRelayStreamInProcess(b *testing.B) {
	var upstream bytes.Buffer
	for _, ev := range benchEvents(benchLongChunks) {
		upstream.Write(ev)
	}
	stream := upstream.String()
	const events = benchLongChunks + 2
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/events, "ns/event")
		b.ReportMetric(0, "ns/op")
	}
	b.Run("Copy", func(b *testing.B) {
		w := &discardWriter{header: http.Header{}}
		buf := make([]byte, 4096)
		b.ReportAllocs()
		for b.Loop() {
			body := strings.NewReader(stream)
			for {
				n, err := body.Read(buf)
				w.Write(buf[:n])
				w.Flush()
				if err != nil {
					break
				}
			}
		}
		report(b)
	})
	b.Run("SSE", func(b *testing.B) {
		w := &discardWriter{header: http.Header{}}
		var out []byte
		b.ReportAllocs()
		for b.Loop() {
			for ev, err := range sse.Read(strings.NewReader(stream)) {
				if err != nil {
					b.Fatal(err)
				}
				out = append(append(append(out[:0], "data: "...), ev.Data...), "\n\n"...)
				w.Write(out)
				w.Flush()
			}
		}
		report(b)
	})
	b.Run("SSEStream", func(b *testing.B) {
		w := &discardWriter{header: http.Header{}}
		var data []byte
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			clear(w.header)
			s, err := sse.Start(w, req, sse.WithKeepAlive(0))
			if err != nil {
				b.Fatal(err)
			}
			for ev, err := range sse.Read(strings.NewReader(stream)) {
				if err != nil {
					b.Fatal(err)
				}
				data = append(data[:0], ev.Data...)
				if err := s.WriteRaw("", data); err != nil {
					b.Fatal(err)
				}
			}
			s.Close()
		}
		report(b)
	})
	b.Run("Gateway", func(b *testing.B) {
		r, err := relay.New([]relay.Route{{Model: "bench", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.test/v1"}}}},
			relay.WithTransport(roundTripper(stream)))
		require.NoError(b, err)
		catalog := models.NewMemoryCatalog(models.Model{ID: "bench", EndpointTypes: []models.EndpointType{models.Compat}})
		h := chat.NewHandler(catalog, r.Chat(), endpoint.WithKeepAlive(0))
		w := &discardWriter{header: http.Header{}}
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(benchStreamRequest))
			req.Header["Content-Type"] = []string{"application/json"}
			clear(w.header)
			h.ServeHTTP(w, req)
		}
		report(b)
		b.ReportMetric(float64(w.flushes)/float64(b.N), "flushes/op")
	})
}
