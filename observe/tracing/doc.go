// Package tracing makes OpenTelemetry traces of a gatewaykit gateway
// (go.opentelemetry.io/otel, and contrib's otelhttp): one server span
// per request, with the GenAI semantic conventions, and a client span per
// upstream call of the relay, whose traceparent goes upstream. It lives in
// the nested module github.com/gatewaykit/gatewaykit/observe, so that
// importing the kit never brings OpenTelemetry along, and reads the kit's
// dependency-free hook points (package telemetry).
//
// # Wiring
//
//	tp, err := tracing.FromEnv(ctx) // nil when the OTEL_* variables ask for nothing
//	…
//	if tp != nil {
//		defer tp.Shutdown(context.Background())
//		tr := tracing.New(tp)
//		relayOpts = append(relayOpts, relay.WithTransport(tr.Transport(relay.NewTransport())))
//		handler = tr.Middleware(handler) // handler: the gateway
//	}
//
// # Configuration
//
// [FromEnv] reads the standard environment variables of the OpenTelemetry
// SDK through contrib's autoexport: OTEL_TRACES_EXPORTER (otlp, console,
// none), OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc),
// OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG. Tracing is off when
// none of OTEL_TRACES_EXPORTER and the OTLP endpoints is set (or with
// OTEL_SDK_DISABLED=true); OTEL_TRACES_EXPORTER=console prints every span
// to standard output.
//
// # Spans
//
// The server span of a request is named after its route ("POST
// /v1/chat/completions") and carries http.route and otelhttp's HTTP
// attributes; a generation request adds
//
//	gen_ai.operation.name       chat, text_completion, embeddings or generate_content
//	gen_ai.request.model        the catalogue id of the model
//	gen_ai.usage.input_tokens   the tokens settled against the request's key
//	gen_ai.usage.output_tokens
//
// Each upstream call of the relay (through [Tracing.Transport]) is a
// client span, "upstream POST /v1/chat/completions", a child of the
// request's span, and the upstream gets its traceparent. No span records
// a header or the request's query string: neither the client's key nor
// the upstream's is ever an attribute.
package tracing
