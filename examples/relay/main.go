// Command relay runs gatewaykit as a gateway in front of any
// OpenAI-compatible service: it serves the models that the upstream lists
// at /v1/models, under the built-in demo keys, and relays every call to
// the upstream with the upstream's own key.
//
//	go run ./examples/server &                               # an upstream on :8080
//	go run ./examples/relay -upstream http://127.0.0.1:8080/v1 -upstream-key sk-demo
//	GATEWAY_UPSTREAM_KEY=sk-... go run ./examples/relay -upstream https://api.openai.com/v1
//	go run ./examples/relay -addr :9000 -upstream ...
//
// Flags:
//
//	-addr          address to listen on (default 127.0.0.1:8081); a bare
//	               port means every interface, as :8081 does
//	-upstream      the upstream's base URL, ending in /v1 (required)
//	-upstream-key  the upstream's API key (default: $GATEWAY_UPSTREAM_KEY)
//	-max-conns     connections served at once (default 1024); when all
//	               are open, the longest idle one gives way to a new
//	               client, and more wait while every one is busy
//	-admin-addr    address of the admin listener (default
//	               127.0.0.1:8091), which serves Prometheus metrics at
//	               /metrics; empty for none
//	-gogc          the garbage collector's target percentage (default
//	               400, unless the GOGC variable is set, which then
//	               rules; -gogc given explicitly overrides both); see
//	               below
//	-log-flush     how long log lines, the access log's included, wait
//	               in a 32 KiB buffer before they are written to stderr
//	               (default 100ms; 0 writes each line at once); see below
//
// GET /healthz and GET /readyz (200 once the upstream has listed its
// models and answers, else 503) are served without credentials. Traces
// go where the standard OTEL_* variables say, with the upstream calls'
// spans and traceparent; they are off when the variables are unset.
//
// The banner is printed once the port is bound, with a URL a browser can
// open. The server has package gateway's connection limits
// (gateway.NewServer, gateway.LimitListener): request headers within 10s
// and of at most 64 KiB (431 beyond), idle keep-alive connections closed
// after 2 minutes, and at most -max-conns connections; no read or write
// timeout, which would cut streams.
//
// Clients use the demo keys of examples/server: sk-demo (unlimited quota,
// no rate limit), sk-demo-empty (zero quota, to see the 403) and
// sk-demo-limited (5 requests a minute, to see the 429). The upstream's key is
// never shown to them, and theirs never reaches the upstream.
//
// # What is served
//
// The model list is the upstream's, read at start-up: each model
// keeps its supported_endpoint_types where the upstream gives them (as
// gatewaykit's own servers do); a plain OpenAI-compatible upstream gives
// none, and such a model is taken to serve compat and compat-response
// (chat, completions and responses), as the design documents. Mounted:
// the model list (in its three formats), chat completions, legacy
// completions, responses (stored here, in memory, so previous_response_id
// works across calls), the conversations of /v1/conversations (kept here
// too, in memory: the upstream is sent a conversation's items as the
// input of each response that names it, so any OpenAI-compatible
// upstream serves them, and an upstream's own conversations are not
// reached), video tasks (created upstream before the client is
// answered, so the upstream's validation errors come back at once as
// 400s; polled, up to 64 at once, and downloaded upstream; the gateway
// keeps its own task ids) and the access points of
// spec §4.4 (embeddings, images, audio, moderations, rerank, and the
// Gemini-style generateContent), all relayed, and the messages format
// (POST /v1/messages), translated into the upstream's chat completions;
// the access points refuse a bad key in their own format's error shape.
// Client headers such as OpenAI-Organization and Idempotency-Key are
// forwarded.
//
// # Garbage collection
//
// A relay allocates a few kilobytes per request that live only as long as
// the request, and little that lives longer: with Go's default (GOGC=100)
// it collects often, and the collector costs about a fifth of its CPU
// under load. The relay runs with 400 unless told otherwise (-gogc, or
// the GOGC variable), which spends memory to collect four times less
// often: BENCHMARKS.md gives the CPU saved and the memory it costs
// under load. -gogc 100 restores Go's default; -gogc -1 (GOGC=off)
// turns collection off, which no long-running relay should.
//
// # The access log
//
// One line per request goes to stderr, with the other logs, through a
// buffer written out every -log-flush (and when it fills, and at exit),
// as a web server's buffered access log is: a line costs no system call
// of its own, and none on the path of the request's reply. A line appears
// at most -log-flush after its request ends; a crash loses the last
// -log-flush of lines. -log-flush 0 writes each line as it is logged.
//
// # Start-up
//
// The relay listens at once, even when the upstream is down: until the
// upstream lists its models, every request is answered 503
// service_unavailable with Retry-After (in the error shape of the path's
// format), and the listing is retried with backoff (1s, doubling up to
// 30s), each failed attempt logged once (the upstream's reply redacted
// of credentials). Only a malformed -upstream ends the program at start.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/examples/internal/observability"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/listenaddr"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8081", "address to listen on (:8081 or a bare 8081: every interface)")
	maxConns := flag.Int("max-conns", gateway.DefaultMaxConns, "connections served at once; when all are open, the longest idle one gives way to a new client")
	upstream := flag.String("upstream", "", "the upstream's base URL, ending in /v1 (required)")
	key := flag.String("upstream-key", os.Getenv("GATEWAY_UPSTREAM_KEY"), "the upstream's API key (default $GATEWAY_UPSTREAM_KEY)")
	adminAddr := flag.String("admin-addr", "127.0.0.1:8091", "address of the admin listener, which serves /metrics (empty: none)")
	gogc := flag.Int("gogc", defaultGOGC, "the garbage collector's target percentage (default 400 unless $GOGC is set; -1: off)")
	logFlush := flag.Duration("log-flush", 100*time.Millisecond, "how long log lines wait in a buffer before they are written to stderr (0: each at once)")
	flag.Parse()
	if pct, set := gcPercent(*gogc, flagSet("gogc"), os.Getenv("GOGC")); set {
		debug.SetGCPercent(pct)
	}

	var logOut io.Writer = os.Stderr
	if *logFlush > 0 {
		lw := newLogWriter(os.Stderr, *logFlush)
		defer lw.Close()
		logOut = lw
	}
	logger := slog.New(slog.NewTextHandler(logOut, nil))
	if *upstream == "" {
		fmt.Fprintln(os.Stderr, "relay: -upstream is required, e.g. -upstream http://127.0.0.1:8080/v1")
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, config{upstream: *upstream, key: *key, logger: logger, maxConns: *maxConns, adminAddr: *adminAddr}, os.Stdout); err != nil {
		logger.Error("relay stopped", "error", err)
		if lw, ok := logOut.(*logWriter); ok {
			lw.Close()
		}
		os.Exit(1)
	}
}

// defaultGOGC is the relay's garbage collector target percentage when
// neither -gogc nor the GOGC variable says otherwise.
const defaultGOGC = 400

// gcPercent returns the collector's target percentage to set, and
// whether to set one: gogc when the flag was given (explicit); nothing
// when the GOGC variable is set (env), which the runtime has read; gogc,
// the flag's default, otherwise.
func gcPercent(gogc int, explicit bool, env string) (int, bool) {
	if !explicit && env != "" {
		return 0, false
	}
	return gogc, true
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// config is what the relay example is made of.
type config struct {
	upstream string // base URL, ending in /v1
	key      string // the upstream's key
	logger   *slog.Logger
	// maxConns is the number of connections served at once (run only).
	maxConns int
	// adminAddr is the admin listener's address (run only); empty means
	// none.
	adminAddr string
	// observe is the relay's metrics and traces; nil observes nothing.
	observe *observability.Observability
	// relayOptions, for tests (a faster video poll, say).
	relayOptions []relay.Option
	// runnerOptions configure the video runner, for tests.
	runnerOptions []runner.Option
	// retryMin and retryMax bound the backoff of the start-up model
	// listing; 1s and 30s when zero.
	retryMin, retryMax time.Duration
}

// checkUpstream checks the -upstream base URL: the one error that ends
// the program at start.
func checkUpstream(upstream string) (string, error) {
	base := strings.TrimRight(upstream, "/")
	if !strings.HasSuffix(base, "/v1") {
		return "", fmt.Errorf("-upstream %q must end in /v1", upstream)
	}
	return base, nil
}

// newGateway reads the upstream's models and assembles the relaying
// gateway.
func newGateway(ctx context.Context, c config) (*server, []models.Model, error) {
	base, err := checkUpstream(c.upstream)
	if err != nil {
		return nil, nil, err
	}
	transport := relay.NewTransport()
	ms, err := fetchModels(ctx, &http.Client{Transport: transport, Timeout: 30 * time.Second}, base, c.key)
	if err != nil {
		return nil, nil, err
	}
	routes := make([]relay.Route, len(ms))
	for i, m := range ms {
		routes[i] = relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: base, Key: c.key}}}
	}
	opts := append([]relay.Option{relay.WithLogger(c.logger), relay.WithTransport(transport)}, c.observe.RelayOptions(transport)...)
	opts = append(opts, c.relayOptions...)
	r, err := relay.New(routes, opts...)
	if err != nil {
		return nil, nil, err
	}
	keys, err := gateway.NewKeyStore(ctx, gateway.DemoKeys())
	if err != nil {
		return nil, nil, err
	}
	catalog := models.NewMemoryCatalog(ms...)
	// A relayed task holds a runner worker only to poll its upstream task:
	// run many at once, so that none waits queued at progress 0 while its
	// upstream task runs.
	runnerOptions := append([]runner.Option{runner.WithWorkers(64)}, c.runnerOptions...)
	g, err := gateway.New(gateway.Config{
		Keys:          keys,
		Catalog:       catalog,
		Chat:          r.Chat(),
		Completions:   r.Completions(),
		Responses:     r.Responses(),
		Videos:        r.Videos(),
		Tasks:         c.observe.Tasks(videos.NewMemoryStore(nil)),
		RunnerOptions: runnerOptions,
		// The access points of spec §4.4, behind the same keys; the auth
		// middleware refuses in each format's own error shape.
		Routes: func(mux *http.ServeMux) {
			// The upstream speaks the OpenAI format: the messages format
			// is translated into its chat completions.
			translate := relay.WithFallback(relay.PatternMessages, messages.NewHandler(catalog, r.Chat(), endpoint.WithLogger(c.logger)))
			relay.RegisterAccess(mux, relay.NewAccessHandler(r, catalog, translate))
		},
		Logger:      c.logger,
		AccessLog:   true,
		ReadyChecks: map[string]gateway.Pinger{"relay": r},
	})
	if err != nil {
		return nil, nil, err
	}
	return &server{Gateway: g, handler: c.observe.Handler(relay.ForwardHeaders(g))}, ms, nil
}

// server is the relay example's handler: the gateway, with the client
// headers worth forwarding kept for the relay's backends. Run and
// Shutdown are the gateway's (the video runner).
type server struct {
	*gateway.Gateway
	handler http.Handler
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// upstreamModel is a model as an upstream's /v1/models lists it.
type upstreamModel struct {
	ID            string                `json:"id"`
	OwnedBy       string                `json:"owned_by"`
	Created       int64                 `json:"created"`
	EndpointTypes []models.EndpointType `json:"supported_endpoint_types"`
}

// knownTypes are the endpoint types that this gateway serves: the
// spec's, and those of the other access points, which it relays.
var knownTypes = []models.EndpointType{models.Compat, models.CompatResponse, models.CompatVideo,
	models.Embeddings, models.Moderation, models.Rerank, models.ImageGeneration, models.AudioSpeech, models.AudioTranscription}

// fetchModels reads the upstream's model list (GET base/models). Each
// model keeps the endpoint types it lists that this gateway knows; a model
// that lists none serves compat and compat-response.
func fetchModels(ctx context.Context, client *http.Client, base, key string) ([]models.Model, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the upstream's models: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the upstream's models: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the upstream answered GET %s/models with %s: %.200s", base, res.Status, relay.Redact(string(body), key))
	}
	var list struct {
		Data []upstreamModel `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the upstream's model list: %w", err)
	}
	var ms []models.Model
	seen := make(map[string]bool)
	for _, u := range list.Data {
		if u.ID == "" || seen[u.ID] {
			continue
		}
		seen[u.ID] = true
		m := models.Model{ID: u.ID, OwnedBy: u.OwnedBy, Created: u.Created}
		for _, t := range u.EndpointTypes {
			if slices.Contains(knownTypes, t) && !slices.Contains(m.EndpointTypes, t) {
				m.EndpointTypes = append(m.EndpointTypes, t)
			}
		}
		if len(u.EndpointTypes) == 0 {
			m.EndpointTypes = []models.EndpointType{models.Compat, models.CompatResponse}
		}
		if len(m.EndpointTypes) == 0 {
			continue // only types this gateway does not serve
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("the upstream at %s lists no model", base)
	}
	return ms, models.ValidateModels(ms)
}

// starting is the relay's handler from the start: until the gateway is
// ready, every request is answered 503 service_unavailable with
// Retry-After, in the error shape of the path's format.
type starting struct {
	ready   atomic.Pointer[server]
	retryAt atomic.Int64 // the next listing attempt, in Unix nanoseconds
}

func (s *starting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g := s.ready.Load(); g != nil {
		g.ServeHTTP(w, r)
		return
	}
	if r.URL.Path == gateway.HealthPath {
		// The process answers: it is alive, if not ready (/readyz is
		// answered 503 below).
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`+"\n")
		return
	}
	e := apierrors.New(apierrors.CodeServiceUnavailable, "The gateway is starting: its upstream has not listed its models yet. Retry shortly.")
	e.RetryAfter = max(time.Until(time.Unix(0, s.retryAt.Load())), time.Second)
	apierrors.Renderer{Shape: apierrors.ShapeFor(r)}.Write(w, r, e)
}

// start assembles the gateway, retrying the upstream's model listing with
// backoff (c.retryMin doubling to c.retryMax) until it succeeds or ctx
// ends, and logs each failed attempt once. The gateway, once made, serves
// s's requests.
func (s *starting) start(ctx context.Context, c config) (*server, []models.Model, error) {
	delay, most := c.retryMin, c.retryMax
	if delay <= 0 {
		delay = time.Second
	}
	if most <= 0 {
		most = 30 * time.Second
	}
	for attempt := 1; ; attempt++ {
		g, ms, err := newGateway(ctx, c)
		if err == nil {
			s.ready.Store(g)
			return g, ms, nil
		}
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		s.retryAt.Store(time.Now().Add(delay).UnixNano())
		c.logger.Warn("relay: the upstream's model list is not available; serving 503 until it is",
			"attempt", attempt, "retry_in", delay, "error", err)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
		delay = min(delay*2, most)
	}
}

// run serves until ctx is done, then shuts down gracefully. The banner
// goes to stdout once the port is bound; the models follow once the
// upstream has listed them (until then, requests are answered 503).
func run(ctx context.Context, addr string, c config, stdout io.Writer) error {
	if c.maxConns < 1 {
		return fmt.Errorf("-max-conns %d: want at least 1", c.maxConns)
	}
	if _, err := checkUpstream(c.upstream); err != nil {
		return err
	}
	if c.observe == nil {
		var err error
		if c.observe, err = observability.New(ctx); err != nil {
			return err
		}
	}
	defer func() {
		if serr := c.observe.Shutdown(context.Background()); serr != nil {
			c.logger.Error("flushing the traces", "error", serr)
		}
	}()
	l, err := net.Listen("tcp", listenaddr.Normalize(addr))
	if err != nil {
		return err
	}
	var admin *http.Server
	var adminURL string
	if c.adminAddr != "" {
		al, err := net.Listen("tcp", listenaddr.Normalize(c.adminAddr))
		if err != nil {
			l.Close()
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("-admin-addr %s: %w (another process, such as another gateway on this machine, listens there: give each its own -admin-addr, or -admin-addr '' for none)", c.adminAddr, err)
			}
			return fmt.Errorf("-admin-addr: %w", err)
		}
		mux := http.NewServeMux()
		c.observe.Register(mux)
		admin = gateway.NewServer(al.Addr().String(), mux)
		adminURL = listenaddr.URL(al.Addr())
		go admin.Serve(gateway.LimitListener(al, 64))
		defer admin.Close()
	}
	st := &starting{}
	// The limits of package gateway: header read timeout, idle timeout,
	// header size, and at most maxConns connections at once.
	srv := gateway.NewServer(l.Addr().String(), st)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(gateway.LimitListener(l, c.maxConns)) }()
	fmt.Fprintf(stdout, "gatewaykit relay on %s, in front of %s\n", listenaddr.URL(l.Addr()), c.upstream)
	fmt.Fprintln(stdout, "  keys:   sk-demo (unlimited quota, no rate limit), sk-demo-empty (zero quota: 403),")
	fmt.Fprintln(stdout, "          sk-demo-limited (unlimited quota, 5 requests a minute: 429)")
	if admin != nil {
		fmt.Fprintf(stdout, "  metrics: %s/metrics\n", adminURL)
	}

	type ready struct {
		g   *server
		ms  []models.Model
		err error
	}
	readyc := make(chan ready, 1)
	go func() {
		g, ms, err := st.start(ctx, c)
		readyc <- ready{g, ms, err}
	}()
	var g *server
	select {
	case err := <-errc:
		return err
	case rd := <-readyc:
		if rd.err != nil && ctx.Err() == nil {
			return rd.err
		}
		g = rd.g
		if g != nil {
			go g.Run(context.Background())
			fmt.Fprint(stdout, "  models:")
			for _, m := range rd.ms {
				fmt.Fprintf(stdout, " %s", m.ID)
			}
			fmt.Fprintln(stdout)
		}
	}
	if g != nil {
		select {
		case err := <-errc:
			return err
		case <-ctx.Done():
		}
	}
	c.logger.Info("shutting down; letting in-flight requests finish", "deadline", "30s")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if g != nil {
		if rerr := g.Shutdown(sctx); err == nil {
			err = rerr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
