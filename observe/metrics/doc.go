// Package metrics serves Prometheus metrics of a gatewaykit gateway
// (github.com/prometheus/client_golang). It lives in its own module,
// github.com/gatewaykit/gatewaykit/observe, so that importing the kit
// never brings Prometheus along; it reads the kit's dependency-free hook
// points (package telemetry, relay.WithAttemptObserver,
// auth.WithLimiterErrorObserver) and the stores' interfaces, and adds
// none of its own to the request path.
//
// # Wiring
//
//	reg := prometheus.NewRegistry()
//	m := metrics.New(reg)
//	rl, _ := file.Relay(relay.WithAttemptObserver(m.ObserveAttempt))
//	g, _ := gateway.New(gateway.Config{…, Relay: rl, Tasks: m.Tasks(tasks), ResponseStore: m.Responses(rs),
//		AuthOptions: []auth.Option{auth.WithLimiterErrorObserver(m.ObserveLimiterError)}})
//	m.WatchUsage(db.Keys())                      // a key store that writes usage behind (SQLite, PostgreSQL)
//	main := m.Middleware(g)                      // the API listener
//	admin.Handle(metrics.Pattern, metrics.Handler(reg)) // the admin listener
//
// Serve [Handler] on a listener of its own (the example server's
// -admin-addr), not beside the API: the metrics are not behind the API's
// keys.
//
// # Metrics
//
//	gatewaykit_requests_total{route,model,status}        counter
//	gatewaykit_request_duration_seconds{route,model}     histogram, to the last byte
//	gatewaykit_time_to_first_token_seconds{route,model}  histogram, streams: to the first body byte
//	gatewaykit_open_streams                              gauge
//	gatewaykit_tokens_total{model,direction}             counter, direction input or output
//	gatewaykit_token_details_total{model,detail}         counter, detail cached, cache_write (of the input) or reasoning (of the output)
//	gatewaykit_refused_requests_total{reason}            counter, reason rate_limit or quota
//	gatewaykit_upstream_requests_total{upstream,status}  counter, one per attempt
//	gatewaykit_upstream_failovers_total{upstream}        counter, attempts that failed over
//	gatewaykit_upstream_duration_seconds{upstream}       histogram, to the reply's headers
//	gatewaykit_video_tasks_total{status}                 counter, tasks reaching queued, in_progress, completed, failed
//	gatewaykit_video_queue_depth                         gauge
//	gatewaykit_rate_limiter_errors_total                 counter, requests whose rate limiter failed
//	gatewaykit_unstored_responses_total                  counter, responses the store failed to keep
//	gatewaykit_usage_pending                             gauge, settlements not yet written
//	gatewaykit_usage_write_failures_total                counter, group commits of usage that failed
//
// route is the ServeMux pattern that served the request ("POST
// /v1/chat/completions"; "/" for unknown paths), model a catalogue id
// ("" before the model is known, or for requests without one: a name a
// client made up never becomes a label), status the HTTP status ("0"
// when the client left before any reply). upstream is the relay
// upstream's Name, and its status "error" for an attempt without a reply
// (unreachable or timed out). Every label's values are bounded by the
// configuration. Key ids are not labels by default (one series per key
// would grow without bound): [WithKeyIDs] adds two metrics by key id for
// gateways with few keys. Nothing secret is ever a label.
//
// A stream is a reply whose Content-Type is text/event-stream; its time
// to first token is the time to the first byte of its first event (a
// comment line, such as the ": keep-alive" that bridges a slow first
// token, does not count), and it is open from its headers to the end of
// the request.
//
// Tokens are the ones that each request's handler settled against its
// key (auth.SettleParams.InputTokens and OutputTokens, which the kit's
// handlers add to the request's telemetry.Info, mounted through package
// gateway or not), or would have for a request without one; video
// tasks, charged in seconds, count none. gatewaykit_token_details_total
// splits out the parts of them that providers price apart, as the
// backend reported them (auth.SettleParams.CachedTokens,
// CacheWriteTokens and ReasoningTokens): the input tokens read from
// (cached) and written to (cache_write) the provider's prompt cache, and
// the output tokens spent reasoning. They are parts of
// gatewaykit_tokens_total, not added to it.
//
// The last three watch the stores when they fail: a response that the
// response store failed to keep was generated and charged, and its client
// was told ([Metrics.Responses]); a key store that writes usage behind
// in group commits (telemetry.UsageWriter: the SQLite and PostgreSQL
// stores, given to [Metrics.WatchUsage]) reports the settlements that
// wait in its memory, which grow while its database cannot be written,
// and its commits that failed, each tried again. Both are read at each
// scrape, and are 0 without such a store.
//
// The video queue depth is this process's view: tasks created here less
// those claimed or deleted (while queued) here. Summed over the replicas
// that share a task store it is the store's queue, less what was queued
// before they started.
//
// The rate limiter's errors are the requests that met a failing limiter
// (a shared one whose Redis cannot be reached): served without a rate
// limit when the auth middleware fails open (its default), refused with
// 503 when it fails closed (auth.WithLimiterFailure). A rise is an
// outage of the limiter, not of the gateway.
package metrics
