package relay_test

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkAccess measures the pass-through access points, directly
// against a fake upstream and through the gateway (auth middleware and the
// access handler), in one run, like BenchmarkRelay: an embeddings call
// (a 2 KiB JSON request, a 12 KiB JSON reply) and a messages-format stream
// of 64 events.
func BenchmarkAccess(b *testing.B) {
	vec := strings.TrimSuffix(strings.Repeat("0.0123456789,", 900), ",")
	embedReply := []byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[` + vec + `]}],"model":"up-embed-1","usage":{"prompt_tokens":8,"total_tokens":8}}`)
	var stream []byte
	stream = append(stream, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"up-chat-1\"}}\n\n"...)
	for i := range 62 {
		stream = fmt.Appendf(stream, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word%d\"}}\n\n", i)
	}
	stream = append(stream, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	events := strings.Split(string(stream), "\n\n")
	events = events[:len(events)-1]

	up := newFakeUpstream(b, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" {
			w.Header()["Content-Type"] = []string{"text/event-stream"}
			f := w.(http.Flusher)
			for _, ev := range events {
				_, _ = io.WriteString(w, ev+"\n\n")
				f.Flush()
			}
			return
		}
		w.Header()["Content-Type"] = []string{"application/json"}
		_, _ = w.Write(embedReply)
	})
	gw := newAccessGateway(b, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
	input := `"` + strings.Repeat("lorem ipsum ", 170) + `"`
	for _, shape := range []struct{ name, path, body, keyHeader, keyPrefix string }{
		{"Embeddings", "/v1/embeddings", `{"model":"embed-1","input":` + input + `}`, "Authorization", "Bearer "},
		{"MessagesStream64", "/v1/messages", `{"model":"chat-1","stream":true,"max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, "X-Api-Key", ""},
	} {
		for _, target := range []struct{ name, url string }{{"Direct", up.srv.URL}, {"Gateway", gw.srv.URL}} {
			b.Run(shape.name+"/"+target.name, func(b *testing.B) {
				do := func() {
					req, _ := http.NewRequest(http.MethodPost, target.url+shape.path, strings.NewReader(shape.body))
					req.Header[shape.keyHeader] = []string{shape.keyPrefix + keyOK}
					req.Header["Content-Type"] = []string{"application/json"}
					res, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if err != nil || res.StatusCode != 200 || n == 0 {
						b.Fatalf("status %d, %d bytes, %v", res.StatusCode, n, err)
					}
				}
				do()
				lat := make([]time.Duration, 0, 1024)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					start := time.Now()
					do()
					lat = append(lat, time.Since(start))
				}
				b.StopTimer()
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
			})
		}
	}
}
