package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/observe/tracing"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/videos"
)

// observability is the server's metrics (served at /metrics on the admin
// listener) and traces (when the OTEL_* variables ask for them). A nil
// *observability observes nothing: the tests that need none pass none.
type observability struct {
	registry *prometheus.Registry
	metrics  *metrics.Metrics
	tracing  *tracing.Tracing // nil: traces are off
	shutdown func(context.Context) error
}

// newObservability registers the gateway's metrics, and the Go runtime's
// and the process's, and sets traces up from the OTEL_* variables.
func newObservability(ctx context.Context) (*observability, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o := &observability{registry: reg, metrics: metrics.New(reg), shutdown: func(context.Context) error { return nil }}
	tp, err := tracing.FromEnv(ctx)
	if err != nil {
		return nil, fmt.Errorf("traces (OTEL_* variables): %w", err)
	}
	if tp != nil {
		o.tracing = tracing.New(tp)
		o.shutdown = tp.Shutdown
	}
	return o, nil
}

// relayOptions observe the relay's upstream calls: attempts and
// failovers, and a span per call.
func (o *observability) relayOptions() []relay.Option {
	if o == nil {
		return nil
	}
	opts := []relay.Option{relay.WithAttemptObserver(o.metrics.ObserveAttempt)}
	if o.tracing != nil {
		opts = append(opts, relay.WithTransport(o.tracing.Transport(relay.NewTransport())))
	}
	return opts
}

// tasks counts the video tasks of ts.
func (o *observability) tasks(ts videos.TaskStore) videos.TaskStore {
	if o == nil || ts == nil {
		return ts
	}
	return o.metrics.Tasks(ts)
}

// handler wraps the gateway's handler with the metrics and traces
// middlewares.
func (o *observability) handler(h http.Handler) http.Handler {
	if o == nil {
		return h
	}
	h = o.metrics.Middleware(h)
	if o.tracing != nil {
		h = o.tracing.Middleware(h)
	}
	return h
}

// readyChecks are the dependencies that /readyz asks beside the stores
// and the relay, which package gateway finds itself.
func readyChecks(st *stores) map[string]gateway.Pinger {
	if p, ok := st.limiter.(gateway.Pinger); ok {
		return map[string]gateway.Pinger{"redis": p}
	}
	return nil
}

// adminMux is the admin listener's mux (-admin-addr): GET /metrics.
func (o *observability) adminMux() *http.ServeMux {
	mux := http.NewServeMux()
	if o != nil {
		mux.Handle(metrics.Pattern, metrics.Handler(o.registry))
	}
	return mux
}
