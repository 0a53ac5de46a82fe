package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// geminiBenchEvents is a Gemini-format stream of n events: n-1 one-word
// text events, each with its running usageMetadata as Google sends it,
// and the last with the finishReason.
func geminiBenchEvents(n int) string {
	words := strings.Fields(strings.Repeat("the quick brown fox jumps over the lazy dog ", n/9+1))[:n]
	var b bytes.Buffer
	for i, w := range words {
		if i > 0 {
			w = " " + w
		}
		text, _ := json.Marshal(w)
		finish := ""
		if i == n-1 {
			finish = `,"finishReason":"STOP"`
		}
		fmt.Fprintf(&b, `data: {"candidates":[{"content":{"parts":[{"text":%s}],"role":"model"}%s,"index":0}],`+
			`"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":%d,"totalTokenCount":%d},"modelVersion":"bench","responseId":"r1"}`+"\r\n\r\n",
			text, finish, i+1, 21+i)
	}
	return b.String()
}

// BenchmarkGeminiUpstreamStreamInProcess measures the CPU per event of a
// chat stream relayed from a Gemini-format upstream (its events read,
// translated into chat deltas and written as chat chunks) beside the same
// stream from an OpenAI-format upstream (BenchmarkRelayStreamInProcess's
// Gateway), in one run, without sockets: each upstream stream, 512
// events, comes from memory and the client's side drops the bytes.
func BenchmarkGeminiUpstreamStreamInProcess(b *testing.B) {
	var openai bytes.Buffer
	for _, ev := range benchEvents(benchLongChunks) {
		openai.Write(ev)
	}
	for _, tc := range []struct {
		name   string
		api    relay.API
		stream string
	}{
		{"OpenAI", relay.APIOpenAI, openai.String()},
		{"Gemini", relay.APIGemini, geminiBenchEvents(benchLongChunks)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			r, err := relay.New([]relay.Route{{Model: "bench", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.test/v1", API: tc.api}}}},
				relay.WithTransport(roundTripper(tc.stream)))
			require.NoError(b, err)
			catalog := models.NewMemoryCatalog(models.Model{ID: "bench", EndpointTypes: []models.EndpointType{models.Compat}})
			h := chat.NewHandler(catalog, r.Chat(), endpoint.WithKeepAlive(0))
			w := &discardWriter{header: http.Header{}}
			check := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(benchStreamRequest))
			req.Header["Content-Type"] = []string{"application/json"}
			h.ServeHTTP(check, req)
			require.Equal(b, 200, check.Code)
			require.GreaterOrEqual(b, strings.Count(check.Body.String(), "\n\n"), benchLongChunks, check.Body.String())
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(benchStreamRequest))
				req.Header["Content-Type"] = []string{"application/json"}
				clear(w.header)
				h.ServeHTTP(w, req)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchLongChunks, "ns/event")
			b.ReportMetric(0, "ns/op")
		})
	}
}
