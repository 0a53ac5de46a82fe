package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gatewaykit/gatewaykit/internal/reqctx"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// Pattern is the route of [Handler], in ServeMux syntax.
const Pattern = "GET /metrics"

// Handler serves the metrics of g in Prometheus's text format (or
// OpenMetrics, when the scraper asks for it).
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// DefaultBuckets are the buckets of the latency histograms, in seconds:
// from 5ms (a cached or refused request) to 2 minutes (a long
// generation).
var DefaultBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// Metrics records the metrics of a gateway (see the package
// documentation). Make it with [New]; it is safe for concurrent use.
type Metrics struct {
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	ttft      *prometheus.HistogramVec
	streams   prometheus.Gauge
	tokens    *prometheus.CounterVec
	details   *prometheus.CounterVec
	refused   *prometheus.CounterVec
	upstream  *prometheus.CounterVec
	failovers *prometheus.CounterVec
	upTime    *prometheus.HistogramVec
	tasks     *prometheus.CounterVec
	queue     prometheus.Gauge
	limiter   prometheus.Counter
	unstored  prometheus.Counter

	// usage is the telemetry.UsageWriter of WatchUsage, if any.
	usage atomic.Pointer[telemetry.UsageWriter]

	// keyRequests and keyTokens count by key id, with WithKeyIDs only.
	keyRequests *prometheus.CounterVec
	keyTokens   *prometheus.CounterVec

	series    sync.Map // seriesKey → *series
	modelToks sync.Map // model → *tokenCounters
	attempts  sync.Map // attemptKey → *attemptSeries
}

// An Option configures [New].
type Option func(*Metrics)

// WithKeyIDs adds two metrics labelled by API key id, for gateways with a
// bounded number of keys:
//
//	gatewaykit_key_requests_total{key_id,status}
//	gatewaykit_key_tokens_total{key_id,direction}
//
// Every key that sends a request adds series that last as long as the
// process, so by default there are none: a gateway with many keys reads
// per-key usage from its usage records instead. Ids only, never secrets:
// an unknown secret has no id and is not counted.
func WithKeyIDs() Option {
	return func(m *Metrics) {
		m.keyRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_key_requests_total",
			Help: "Requests by API key id and HTTP status.",
		}, []string{"key_id", "status"})
		m.keyTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_key_tokens_total",
			Help: "Tokens settled by API key id and direction (input or output).",
		}, []string{"key_id", "direction"})
	}
}

// New returns Metrics whose collectors are registered with reg. It panics
// if reg is nil or already holds them (a programmer error, at start).
func New(reg prometheus.Registerer, opts ...Option) *Metrics {
	if reg == nil {
		panic("metrics: New: nil Registerer")
	}
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_requests_total",
			Help: "Requests served, by route (the ServeMux pattern), model and HTTP status.",
		}, []string{"route", "model", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatewaykit_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its reply.",
			Buckets: DefaultBuckets,
		}, []string{"route", "model"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatewaykit_time_to_first_token_seconds",
			Help:    "Time from a streamed request's arrival to the first byte of its stream's body.",
			Buckets: DefaultBuckets,
		}, []string{"route", "model"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gatewaykit_open_streams",
			Help: "Event streams being written.",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_tokens_total",
			Help: "Tokens settled against API keys, by model and direction (input or output).",
		}, []string{"model", "direction"}),
		details: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_token_details_total",
			Help: "Parts of the settled tokens that providers price apart, by model and detail (cached and cache_write, parts of the input; reasoning, part of the output).",
		}, []string{"model", "detail"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_refused_requests_total",
			Help: "Requests refused by the gateway's own limits, by reason (rate_limit or quota).",
		}, []string{"reason"}),
		upstream: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_upstream_requests_total",
			Help: "Attempts at relay upstreams, by upstream and HTTP status (error when no reply came).",
		}, []string{"upstream", "status"}),
		failovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_upstream_failovers_total",
			Help: "Attempts at an upstream that failed in a way the relay fails over on, by upstream.",
		}, []string{"upstream"}),
		upTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "gatewaykit_upstream_duration_seconds",
			Help:    "Time from sending a request to an upstream to its reply's headers (or its failure), by upstream.",
			Buckets: DefaultBuckets,
		}, []string{"upstream"}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gatewaykit_video_tasks_total",
			Help: "Video tasks that reached a status: queued (created), in_progress (first claimed), completed, failed.",
		}, []string{"status"}),
		queue: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gatewaykit_video_queue_depth",
			Help: "Video tasks queued here and not yet claimed or deleted here.",
		}),
		limiter: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gatewaykit_rate_limiter_errors_total",
			Help: "Requests whose rate limiter (Redis, say) failed: served without a rate limit, or refused with 503, as the gateway is set.",
		}),
		unstored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gatewaykit_unstored_responses_total",
			Help: "Responses generated (and charged) that the response store failed to keep; their clients were told.",
		}),
	}
	for _, o := range opts {
		o(m)
	}
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gatewaykit_usage_pending",
		Help: "Settlements of usage accepted and not yet written by the key store's group commit (0 without one).",
	}, func() float64 {
		if w := m.usage.Load(); w != nil {
			return float64((*w).PendingUsage())
		}
		return 0
	})
	failures := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gatewaykit_usage_write_failures_total",
		Help: "Group commits of usage that failed (each is tried again).",
	}, func() float64 {
		if w := m.usage.Load(); w != nil {
			return float64((*w).FailedUsageWrites())
		}
		return 0
	})
	reg.MustRegister(m.requests, m.duration, m.ttft, m.streams, m.tokens, m.details, m.refused,
		m.upstream, m.failovers, m.upTime, m.tasks, m.queue, m.limiter, m.unstored, pending, failures)
	if m.keyRequests != nil {
		reg.MustRegister(m.keyRequests, m.keyTokens)
	}
	return m
}

// seriesKey names the per-request series of one route, model and status.
type seriesKey struct {
	route, model string
	status       int
}

// series are the collectors of one seriesKey, looked up once.
type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// tokenCounters are the token counters of one model, looked up once.
type tokenCounters struct {
	input, output                 prometheus.Counter
	cached, cacheWrite, reasoning prometheus.Counter
}

func (m *Metrics) tokensOf(model string) *tokenCounters {
	if c, ok := m.modelToks.Load(model); ok {
		return c.(*tokenCounters)
	}
	c := &tokenCounters{
		input:      m.tokens.WithLabelValues(model, "input"),
		output:     m.tokens.WithLabelValues(model, "output"),
		cached:     m.details.WithLabelValues(model, "cached"),
		cacheWrite: m.details.WithLabelValues(model, "cache_write"),
		reasoning:  m.details.WithLabelValues(model, "reasoning"),
	}
	v, _ := m.modelToks.LoadOrStore(model, c)
	return v.(*tokenCounters)
}

func (m *Metrics) seriesOf(k seriesKey) *series {
	if s, ok := m.series.Load(k); ok {
		return s.(*series)
	}
	s := &series{
		requests: m.requests.WithLabelValues(k.route, k.model, strconv.Itoa(k.status)),
		duration: m.duration.WithLabelValues(k.route, k.model),
	}
	v, _ := m.series.LoadOrStore(k, s)
	return v.(*series)
}

// Middleware records the metrics of each request that next serves: wrap
// the gateway with it. It puts a telemetry.Info in the request's context,
// which the gateway fills, or uses the one already there (the tracing
// middleware's, in either order). It returns next's replies unchanged.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	if next == nil {
		panic("metrics: Middleware: nil next Handler")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, m: m, start: time.Now()}
		if rec.info = telemetry.FromContext(r.Context()); rec.info == nil {
			rec.info = &rec.own
			// The request's own context value, which the auth
			// middleware also records its principal in (one copy of
			// the request for both).
			r = r.WithContext(reqctx.New(r.Context(), rec.info))
		}
		next.ServeHTTP(rec, r)
		m.record(rec)
	})
}

// record records the metrics of the request that rec served.
func (m *Metrics) record(rec *recorder) {
	info := rec.info
	s := m.seriesOf(seriesKey{info.Route, info.Model, rec.status})
	s.requests.Inc()
	s.duration.Observe(time.Since(rec.start).Seconds())
	if rec.stream {
		m.streams.Dec()
		if !rec.first.IsZero() {
			m.ttft.WithLabelValues(info.Route, info.Model).Observe(rec.first.Sub(rec.start).Seconds())
		}
	}
	if info.InputTokens > 0 || info.OutputTokens > 0 {
		c := m.tokensOf(info.Model)
		c.input.Add(float64(max(info.InputTokens, 0)))
		c.output.Add(float64(max(info.OutputTokens, 0)))
		c.cached.Add(float64(max(info.CachedTokens, 0)))
		c.cacheWrite.Add(float64(max(info.CacheWriteTokens, 0)))
		c.reasoning.Add(float64(max(info.ReasoningTokens, 0)))
	}
	if m.keyRequests != nil && info.KeyID != "" {
		m.keyRequests.WithLabelValues(info.KeyID, strconv.Itoa(rec.status)).Inc()
		if info.InputTokens > 0 {
			m.keyTokens.WithLabelValues(info.KeyID, "input").Add(float64(info.InputTokens))
		}
		if info.OutputTokens > 0 {
			m.keyTokens.WithLabelValues(info.KeyID, "output").Add(float64(info.OutputTokens))
		}
	}
	switch info.Refusal {
	case telemetry.RefusalRateLimit:
		m.refused.WithLabelValues("rate_limit").Inc()
	case telemetry.RefusalQuota:
		m.refused.WithLabelValues("quota").Inc()
	}
}

// ObserveAttempt records one attempt at a relay upstream: give it to
// relay.WithAttemptObserver.
func (m *Metrics) ObserveAttempt(_ context.Context, a relay.Attempt) {
	s := m.attemptOf(attemptKey{a.Upstream, a.Status})
	s.count.Inc()
	s.duration.Observe(a.Duration.Seconds())
	if a.Failover {
		m.failovers.WithLabelValues(a.Upstream).Inc()
	}
}

// attemptKey names the series of an upstream attempt: its upstream and
// status (0 for none).
type attemptKey struct {
	upstream string
	status   int
}

// attemptSeries are the series of the attempts of one attemptKey, looked
// up once.
type attemptSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

func (m *Metrics) attemptOf(k attemptKey) *attemptSeries {
	if s, ok := m.attempts.Load(k); ok {
		return s.(*attemptSeries)
	}
	status := "error"
	if k.status != 0 {
		status = strconv.Itoa(k.status)
	}
	s := &attemptSeries{
		count:    m.upstream.WithLabelValues(k.upstream, status),
		duration: m.upTime.WithLabelValues(k.upstream),
	}
	v, _ := m.attempts.LoadOrStore(k, s)
	return v.(*attemptSeries)
}

// ObserveLimiterError counts one request whose rate limiter failed
// (gatewaykit_rate_limiter_errors_total): give it to
// auth.WithLimiterErrorObserver (gateway.Config.AuthOptions).
func (m *Metrics) ObserveLimiterError(context.Context, error) {
	m.limiter.Inc()
}

// recorder is the ResponseWriter that Middleware hands down: it notes the
// status, whether the reply is a stream, and when its body's first byte
// went out. It flushes (http.Flusher, and FlushError for
// http.ResponseController and go-sse) and unwraps.
type recorder struct {
	http.ResponseWriter
	m      *Metrics
	info   *telemetry.Info // own, or one already in the context
	own    telemetry.Info
	start  time.Time
	first  time.Time // the first body byte of a stream
	status int
	stream bool
}

// header records the status of the reply's headers, and opens a stream.
func (rec *recorder) header(code int) {
	if rec.status != 0 {
		return
	}
	rec.status = code
	// The header's canonical key, read without canonicalising it again.
	if ct := rec.Header()["Content-Type"]; len(ct) > 0 && strings.HasPrefix(ct[0], "text/event-stream") {
		rec.stream = true
		rec.m.streams.Inc()
	}
}

func (rec *recorder) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		rec.header(code)
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	rec.header(http.StatusOK)
	if rec.stream && rec.first.IsZero() && len(b) > 0 && b[0] != ':' {
		// The first event; a comment (": keep-alive") is not a token.
		rec.first = time.Now()
	}
	return rec.ResponseWriter.Write(b)
}

// FlushError flushes the writer it wraps; a flush before any write sends
// the headers with status 200, as net/http does.
func (rec *recorder) FlushError() error {
	rec.header(http.StatusOK)
	return http.NewResponseController(rec.ResponseWriter).Flush()
}

// Flush implements http.Flusher.
func (rec *recorder) Flush() { _ = rec.FlushError() }

func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }
