package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/examples/internal/observability"
	"github.com/gatewaykit/gatewaykit/relay"
)

// The in-process benchmarks time the relay example's handler as the
// program assembles it (metrics middleware, access log formatted by
// slog's text handler, auth, the chat handler and the relay's backend),
// with the upstream's replies coming from memory and the client's side
// a writer that drops the bytes: the gateway's own work per request,
// without sockets, for profiling (go test -bench . -cpuprofile). The
// figures that judge the relay against a byte-copying one are those of
// ../shared/bench/vs-naive.sh (BENCHMARKS.md).

// The request and the upstream's replies are those of the load test's
// mock upstream (../shared/bench/mockupstream): a canned chat completion,
// and a stream of 20 one-word chunks, the finish chunk, the usage chunk
// and [DONE].
const (
	benchRequest       = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"stream":false}`
	benchStreamRequest = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"stream":true,"stream_options":{"include_usage":true}}`
	benchReply         = `{"id":"chatcmpl-mock0001","object":"chat.completion","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a canned reply from the mock upstream. It is about as long as a short real answer.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":24,"total_tokens":43,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
	benchStreamChunks  = 20
)

// benchStream is the mock upstream's stream.
var benchStream = func() string {
	var b strings.Builder
	for range benchStreamChunks {
		b.WriteString(`data: {"id":"chatcmpl-mock0001","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{"content":"hello "},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(`data: {"id":"chatcmpl-mock0001","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}` + "\n\n")
	fmt.Fprintf(&b, `data: {"id":"chatcmpl-mock0001","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n", benchStreamChunks, benchStreamChunks+19)
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}()

// memoryUpstream answers every call from memory: the stream when the
// request asks for one, the reply otherwise.
type memoryUpstream struct{}

func (memoryUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	res := &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Request: req}
	if strings.Contains(string(body), `"stream":true`) {
		res.Header["Content-Type"] = []string{"text/event-stream"}
		res.Body = io.NopCloser(strings.NewReader(benchStream))
		res.ContentLength = -1
		return res, nil
	}
	res.Header["Content-Type"] = []string{"application/json"}
	res.Body = io.NopCloser(strings.NewReader(benchReply))
	res.ContentLength = int64(len(benchReply))
	return res, nil
}

// discardWriter is a client's side that drops what it is sent.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(code int)        { w.status = code }
func (w *discardWriter) Flush()                      {}

// benchRelay is the relay example's handler in front of memoryUpstream,
// with its access log formatted and dropped.
func benchRelay(b *testing.B) http.Handler {
	models := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"object":"list","data":[{"id":"gpt-4o-mini","object":"model","created":1730000000,"owned_by":"mock"}]}`)
	}))
	b.Cleanup(models.Close)
	obs, err := observability.New(context.Background())
	require.NoError(b, err)
	g, _, err := newGateway(context.Background(), config{
		upstream:     models.URL + "/v1",
		key:          "sk-mock",
		logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		observe:      obs,
		relayOptions: []relay.Option{relay.WithTransport(memoryUpstream{})},
	})
	require.NoError(b, err)
	return g
}

func BenchmarkRelayInProcess(b *testing.B) {
	for _, tc := range []struct {
		name, body string
		events     int
	}{
		{"JSON", benchRequest, 0},
		{"Stream", benchStreamRequest, benchStreamChunks + 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchRelay(b)
			w := &discardWriter{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(tc.body))
				req.Header["Content-Type"] = []string{"application/json"}
				req.Header["Authorization"] = []string{"Bearer sk-demo"}
				clear(w.header)
				w.status = 0
				h.ServeHTTP(w, req)
				if w.status != 0 && w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
			if tc.events > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tc.events), "ns/event")
			}
		})
	}
}
