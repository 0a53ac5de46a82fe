// Package observability wires the metrics and traces of module
// github.com/gatewaykit/gatewaykit/observe into the example programs: a
// Prometheus registry served at /metrics on their admin listener, and
// traces set up from the OTEL_* variables. A nil *Observability observes
// nothing.
package observability

import (
	"context"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/observe/tracing"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/telemetry"
	"github.com/gatewaykit/gatewaykit/videos"
)

// Observability is a program's metrics (served by [Observability.AdminMux])
// and traces (when the OTEL_* variables ask for them).
type Observability struct {
	registry *prometheus.Registry
	metrics  *metrics.Metrics
	tracing  *tracing.Tracing // nil: traces are off
	shutdown func(context.Context) error
}

// New registers the gateway's metrics, and the Go runtime's and the
// process's, and sets traces up from the OTEL_* variables
// ([tracing.FromEnv]).
func New(ctx context.Context) (*Observability, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o := &Observability{registry: reg, metrics: metrics.New(reg), shutdown: func(context.Context) error { return nil }}
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

// RelayOptions observe a relay's upstream calls: attempts and failovers,
// and a span per call (through transport, the relay's transport, which it
// replaces with a traced one).
func (o *Observability) RelayOptions(transport http.RoundTripper) []relay.Option {
	if o == nil {
		return nil
	}
	opts := []relay.Option{relay.WithAttemptObserver(o.metrics.ObserveAttempt)}
	if o.tracing != nil {
		opts = append(opts, relay.WithTransport(o.tracing.Transport(transport)))
	}
	return opts
}

// AuthOptions count the requests whose rate limiter fails
// (auth.WithLimiterErrorObserver).
func (o *Observability) AuthOptions() []auth.Option {
	if o == nil {
		return nil
	}
	return []auth.Option{auth.WithLimiterErrorObserver(o.metrics.ObserveLimiterError)}
}

// Tasks counts the video tasks of ts.
func (o *Observability) Tasks(ts videos.TaskStore) videos.TaskStore {
	if o == nil || ts == nil {
		return ts
	}
	return o.metrics.Tasks(ts)
}

// Responses counts the responses that rs fails to keep.
func (o *Observability) Responses(rs responses.Store) responses.Store {
	if o == nil || rs == nil {
		return rs
	}
	return o.metrics.Responses(rs)
}

// WatchUsage reports the usage that keys, a key store, has not written
// yet, if it writes usage behind (telemetry.UsageWriter: the SQLite and
// PostgreSQL stores).
func (o *Observability) WatchUsage(keys any) {
	if w, ok := keys.(telemetry.UsageWriter); ok && o != nil {
		o.metrics.WatchUsage(w)
	}
}

// Handler wraps a gateway's handler with the metrics and traces
// middlewares.
func (o *Observability) Handler(h http.Handler) http.Handler {
	if o == nil {
		return h
	}
	h = o.metrics.Middleware(h)
	if o.tracing != nil {
		h = o.tracing.Middleware(h)
	}
	return h
}

// Register mounts GET /metrics on mux, the admin listener's.
func (o *Observability) Register(mux *http.ServeMux) {
	if o != nil {
		mux.Handle(metrics.Pattern, metrics.Handler(o.registry))
	}
}

// Shutdown sends the spans still batched.
func (o *Observability) Shutdown(ctx context.Context) error {
	if o == nil {
		return nil
	}
	return o.shutdown(ctx)
}
