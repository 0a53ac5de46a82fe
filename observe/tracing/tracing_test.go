package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/observe/tracing"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// settlingChat is the demo chat backend whose replies report 3 input
// and 5 output tokens, which the chat handler settles against the
// request's key and adds to the request's telemetry.Info. It has no
// Stream method: the handler streams its whole reply too.
type settlingChat struct{ chat.Backend }

func (b settlingChat) Complete(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	res, err := b.Backend.Complete(ctx, p)
	if err == nil {
		res.Usage = chat.Usage{PromptTokens: 3, CompletionTokens: 5}
	}
	return res, err
}

type bundle struct {
	spans *tracetest.InMemoryExporter
	up    *relaytest.Upstream
	api   http.Handler
	reg   *prometheus.Registry
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{spans: tracetest.NewInMemoryExporter(), up: relaytest.NewUpstream()}
	t.Cleanup(b.up.Close)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(b.spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := tracing.New(tp)

	rl, err := relay.New([]relay.Route{{Model: "relayed", Upstreams: []relay.Upstream{
		{Name: "up", BaseURL: b.up.BaseURL(), Model: relaytest.ModeOK, Key: "sk-upstream-secret"},
	}}}, relay.WithTransport(tr.Transport(relay.NewTransport())))
	require.NoError(t, err)
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{
		Keys:    keys,
		Catalog: models.NewMemoryCatalog(append(f.Models, models.Model{ID: "relayed", OwnedBy: "test", EndpointTypes: []models.EndpointType{models.Compat}})...),
		Chat:    settlingChat{demo.NewTextBackend().Chat()},
		Relay:   rl,
	})
	require.NoError(t, err)
	// The metrics middleware inside the tracing one: they share the
	// request's telemetry.Info.
	b.reg = prometheus.NewRegistry()
	b.api = tr.Middleware(metrics.New(b.reg).Middleware(g))
	return b
}

func (b *bundle) post(t *testing.T, path, body string, header ...string) int {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	b.api.ServeHTTP(rec, req)
	_, _ = io.Copy(io.Discard, rec.Body)
	return rec.Code
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestRequestSpanCarriesGenAIAttributes: the server span of a chat
// request is named after its route and carries the GenAI attributes.
func TestRequestSpanCarriesGenAIAttributes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	require.Equal(t, 200, b.post(t, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))

	spans := b.spans.GetSpans()
	require.Len(t, spans, 1)
	s := spans[0]
	require.Equal(t, "POST /v1/chat/completions", s.Name)
	require.Equal(t, trace.SpanKindServer, s.SpanKind)
	a := attrs(s)
	require.Equal(t, "chat", a[tracing.AttrOperationName].AsString())
	require.Equal(t, "demo-chat", a[tracing.AttrRequestModel].AsString())
	// settlingChat's tokens, which the handler settled, once.
	require.Equal(t, int64(3), a[tracing.AttrInputTokens].AsInt64())
	require.Equal(t, int64(5), a[tracing.AttrOutputTokens].AsInt64())
	require.Equal(t, "/v1/chat/completions", a["http.route"].AsString())
	for k, v := range a {
		require.NotContains(t, v.Emit(), "sk-demo", "attribute %s", k)
	}
	// The metrics middleware saw the same request, and its model.
	require.NoError(t, testutil.GatherAndCompare(b.reg, strings.NewReader(`
# HELP gatewaykit_requests_total Requests served, by route (the ServeMux pattern), model and HTTP status.
# TYPE gatewaykit_requests_total counter
gatewaykit_requests_total{model="demo-chat",route="POST /v1/chat/completions",status="200"} 1
`), "gatewaykit_requests_total"))
}

// TestUpstreamCallIsAChildSpanWithPropagatedTraceparent: a relayed
// request continues the client's trace; its upstream call is a client
// span, a child of the request's span, and the upstream receives a
// traceparent naming that client span.
func TestUpstreamCallIsAChildSpanWithPropagatedTraceparent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	require.Equal(t, 200, b.post(t, "/v1/chat/completions", `{"model":"relayed","messages":[{"role":"user","content":"hi"}]}`,
		"traceparent", "00-"+clientTrace+"-00f067aa0ba902b7-01"))

	spans := b.spans.GetSpans()
	require.Len(t, spans, 2)
	var server, client tracetest.SpanStub
	for _, s := range spans {
		switch s.SpanKind {
		case trace.SpanKindServer:
			server = s
		case trace.SpanKindClient:
			client = s
		}
	}
	require.Equal(t, clientTrace, server.SpanContext.TraceID().String(), "the request span continues the client's trace")
	require.Equal(t, "relayed", attrs(server)[tracing.AttrRequestModel].AsString())
	require.Equal(t, "upstream POST /v1/chat/completions", client.Name)
	require.Equal(t, server.SpanContext.SpanID(), client.Parent.SpanID(), "the upstream span is a child of the request's")
	require.Equal(t, clientTrace, client.SpanContext.TraceID().String())
	for k, v := range attrs(client) {
		require.NotContains(t, v.Emit(), "sk-upstream-secret", "attribute %s", k)
	}

	var got string
	for _, r := range b.up.Requests() {
		if r.Path == "/v1/chat/completions" {
			got = r.Header.Get("Traceparent")
		}
	}
	require.Equal(t, "00-"+clientTrace+"-"+client.SpanContext.SpanID().String()+"-01", got)
}

// TestFromEnv: tracing is off unless the OTEL_* variables ask for an
// exporter; console makes a provider.
func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		on   bool
	}{
		{"unset", nil, false},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{"disabled", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, false},
		{"console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{"otlp endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { // not parallel: it sets the environment
			for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
				t.Setenv(k, tc.env[k])
			}
			tp, err := tracing.FromEnv(context.Background())
			require.NoError(t, err)
			require.Equal(t, tc.on, tp != nil)
			if tp != nil {
				require.NoError(t, tp.Shutdown(context.Background()))
			}
		})
	}
}

// TestStreamThroughTheMiddleware: a stream is flushed through the
// middleware and ends in one span with the model.
func TestStreamThroughTheMiddleware(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(b.api)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	require.Contains(t, string(body), "data: [DONE]")
	srv.Close() // the span ends when the handler returns

	spans := b.spans.GetSpans()
	require.Len(t, spans, 1)
	require.Equal(t, "POST /v1/chat/completions", spans[0].Name)
	require.Equal(t, "demo-chat", attrs(spans[0])[tracing.AttrRequestModel].AsString())
}

// TestHealthProbesGetNoSpan: /healthz and /readyz get no server span.
func TestHealthProbesGetNoSpan(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		rec := httptest.NewRecorder()
		b.api.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		require.Equal(t, 200, rec.Code, rec.Body.String())
	}
	for _, s := range b.spans.GetSpans() {
		// The relay's readiness probe of its upstream is a client span of
		// its own; the probes themselves have none.
		require.Equal(t, trace.SpanKindClient, s.SpanKind, s.Name)
		require.False(t, s.Parent.IsValid(), s.Name)
	}
}
