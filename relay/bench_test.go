package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// The benchmarks compare, in one run, a client calling a fake upstream
// directly with the same client calling a gateway (auth middleware,
// ForwardHeaders, the chat handler and the relay's backend) in front of
// the same upstream, over loopback HTTP with keep-alive connections. The
// upstream answers from pre-encoded bytes, so that its own cost is as
// small as a real service's reply is fast: the JSON reply of a chat
// completion (~600 bytes), or a stream of 64 chunks (the role chunk, 62
// one-word content chunks, the finish chunk), the usage chunk and
// [DONE].
const (
	benchJSONRequest   = `{"model":"bench","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchStreamRequest = `{"model":"bench","stream":true,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchChunks        = 64
)

// benchUpstream answers chat completions from pre-encoded bytes.
func benchUpstream(tb testing.TB) *httptest.Server {
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog ", 7))[:benchChunks-2]
	reply, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-up", "object": "chat.completion", "created": 1, "model": "bench",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": strings.Join(words, " ")}}},
		"usage": map[string]any{"prompt_tokens": 20, "completion_tokens": len(words), "total_tokens": 20 + len(words)},
	})
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
	events = append(events, []byte("data: [DONE]\n\n"))

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
	r, err := relay.New([]relay.Route{{Model: "bench", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: upstreamKey}}}})
	require.NoError(tb, err)
	keys := auth.NewMemoryKeyStore()
	require.NoError(tb, keys.Add(tb.Context(), clientKey, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	catalog := models.NewMemoryCatalog(models.Model{ID: "bench", EndpointTypes: []models.EndpointType{models.Compat}})
	mux := http.NewServeMux()
	mux.Handle(chat.Pattern, chat.NewHandler(catalog, r.Chat()))
	srv := httptest.NewServer(auth.Middleware(keys)(relay.ForwardHeaders(mux)))
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
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 || n == 0 {
		tb.Fatalf("status %d, %d bytes, %v", res.StatusCode, n, err)
	}
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

// BenchmarkRelayAdded sends, in each iteration, the same request directly
// and through the gateway, so that both see the same load on a shared
// machine, and reports the latency the gateway adds: the medians and p99
// of each, their differences (added-p50-µs, added-p99-µs) and the ratio of
// the medians; for streams also the median cost per event of each.
func BenchmarkRelayAdded(b *testing.B) {
	up := benchUpstream(b)
	gw := benchGateway(b, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	direct := benchClient{client: client, url: up.URL}
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
			gateway.do(b, shape.body)
			var d, g []time.Duration
			for b.Loop() {
				start := time.Now()
				direct.do(b, shape.body)
				mid := time.Now()
				gateway.do(b, shape.body)
				d, g = append(d, mid.Sub(start)), append(g, time.Since(mid))
			}
			slices.Sort(d)
			slices.Sort(g)
			pct := func(l []time.Duration, p int) float64 { return float64(l[len(l)*p/100].Nanoseconds()) / 1e3 }
			b.ReportMetric(pct(d, 50), "direct-p50-µs")
			b.ReportMetric(pct(g, 50), "gateway-p50-µs")
			b.ReportMetric(pct(g, 50)-pct(d, 50), "added-p50-µs")
			b.ReportMetric(pct(g, 99)-pct(d, 99), "added-p99-µs")
			b.ReportMetric(pct(g, 50)/pct(d, 50), "ratio-p50")
			if shape.name == "Stream64" {
				b.ReportMetric(pct(d, 50)*1e3/(benchChunks+2), "direct-ns/event")
				b.ReportMetric(pct(g, 50)*1e3/(benchChunks+2), "gateway-ns/event")
			}
		})
	}
}
