package tracing

import (
	"context"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/reqctx"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The GenAI semantic-convention attributes that the request spans carry.
const (
	AttrOperationName = attribute.Key("gen_ai.operation.name")
	AttrRequestModel  = attribute.Key("gen_ai.request.model")
	AttrInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	AttrOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
)

// DefaultServiceName is the service.name of the spans of [FromEnv] when
// neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one.
const DefaultServiceName = "gatewaykit"

// FromEnv returns a tracer provider configured by the standard OTEL_*
// environment variables (go.opentelemetry.io/contrib/exporters/autoexport),
// or nil when tracing is off: when OTEL_SDK_DISABLED is true,
// OTEL_TRACES_EXPORTER is "none", or neither OTEL_TRACES_EXPORTER nor an
// OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. So an unconfigured process
// exports nothing (autoexport's own default would be OTLP to
// localhost:4318). OTEL_TRACES_EXPORTER=console prints each span to
// standard output as JSON; otlp (with OTEL_EXPORTER_OTLP_PROTOCOL
// http/protobuf or grpc) sends them to a collector. The sampler
// (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG) and the resource
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) come from the
// environment too. Call the provider's Shutdown at exit, to send the
// spans still batched.
func FromEnv(ctx context.Context) (*sdktrace.TracerProvider, error) {
	return fromEnv(ctx, os.Getenv)
}

func fromEnv(ctx context.Context, getenv func(string) string) (*sdktrace.TracerProvider, error) {
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	switch {
	case strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true"),
		exporter == "none",
		exporter == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "":
		return nil, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(
		resource.NewSchemaless(attribute.String("service.name", DefaultServiceName)),
		resource.Environment(),
	)
	if err != nil {
		return nil, err
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// Tracing makes the spans of a gateway with one tracer provider. Make it
// with [New]; it is safe for concurrent use.
type Tracing struct {
	tp         trace.TracerProvider
	propagator propagation.TextMapPropagator
}

// New returns the Tracing of tp, propagating W3C trace context
// (traceparent, tracestate) and baggage. It sets no global: the
// middleware and the transport use tp. New panics if tp is nil.
func New(tp trace.TracerProvider) *Tracing {
	if tp == nil {
		panic("tracing: New: nil TracerProvider")
	}
	return &Tracing{
		tp:         tp,
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// Middleware makes one server span per request that next serves
// (otelhttp), continuing the trace of an incoming traceparent. Once the
// request is served the span is named after its route ("POST
// /v1/chat/completions") and carries the GenAI attributes of a
// generation request: gen_ai.operation.name, gen_ai.request.model (a
// catalogue id) and gen_ai.usage.input_tokens and output_tokens (the
// tokens settled against its key), read from the request's
// telemetry.Info, which the gateway fills. It shares the Info with the
// metrics middleware, in either order. Spans record no header, hence no
// credential, and no query string (which may carry a ?key=). The health
// routes (gateway.HealthPath, gateway.ReadyPath) get no span.
func (t *Tracing) Middleware(next http.Handler) http.Handler {
	if next == nil {
		panic("tracing: Middleware: nil next Handler")
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := telemetry.FromContext(r.Context())
		if info == nil {
			info = new(telemetry.Info)
			// The request's own context value, which the auth
			// middleware also records its principal in (one copy of
			// the request for both).
			r = r.WithContext(reqctx.New(r.Context(), info))
		}
		next.ServeHTTP(w, r)
		span := trace.SpanFromContext(r.Context())
		if !span.IsRecording() {
			return
		}
		if info.Route != "" {
			span.SetName(info.Route)
			span.SetAttributes(attribute.String("http.route", routePath(info.Route)))
		}
		op := operation(info.Route)
		if op == "" {
			return
		}
		span.SetAttributes(AttrOperationName.String(op))
		if info.Model != "" {
			span.SetAttributes(AttrRequestModel.String(info.Model))
		}
		if info.InputTokens > 0 || info.OutputTokens > 0 {
			span.SetAttributes(AttrInputTokens.Int64(info.InputTokens), AttrOutputTokens.Int64(info.OutputTokens))
		}
	})
	return otelhttp.NewHandler(inner, "request",
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }),
		otelhttp.WithSpanOptions(trace.WithSpanKind(trace.SpanKindServer)),
		// Health probes come every few seconds and say nothing a trace
		// would: they get no span.
		otelhttp.WithFilter(func(r *http.Request) bool {
			return r.URL.Path != gateway.HealthPath && r.URL.Path != gateway.ReadyPath
		}),
	)
}

// Transport returns a round tripper that sends through rt (the relay's
// transport: relay.NewTransport()) and makes one client span per upstream
// call, a child of the request's span, with the traceparent header
// propagated upstream. Give it to relay.WithTransport. The span records
// no header, hence never the upstream's key.
func (t *Tracing) Transport(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		panic("tracing: Transport: nil RoundTripper")
	}
	return otelhttp.NewTransport(rt,
		otelhttp.WithTracerProvider(t.tp),
		otelhttp.WithPropagators(t.propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return "upstream " + r.Method + " " + r.URL.Path
		}),
	)
}

// routePath is the path of a ServeMux pattern: "POST /v1/x" → "/v1/x".
func routePath(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		return pattern[i+1:]
	}
	return pattern
}

// operation returns the gen_ai.operation.name of a route, or "" for a
// route that generates nothing (the model list, video status, …).
func operation(route string) string {
	switch route {
	case "POST /v1/chat/completions", "POST /v1/responses", "POST /v1/responses/compact", "POST /v1/messages":
		return "chat"
	case "POST /v1/completions":
		return "text_completion"
	case "POST /v1/embeddings":
		return "embeddings"
	}
	if strings.HasPrefix(route, "POST /v1beta/models/") {
		return "generate_content"
	}
	return ""
}
