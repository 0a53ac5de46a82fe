// Command server runs the whole gatewaykit gateway, its state in a SQLite
// file by default (-db): the demo backend, the built-in demo keys and models, chat completions,
// legacy completions, responses (with stored conversations, and the
// conversations of /v1/conversations), the model list in its three
// formats, and video tasks.
//
//	go run ./examples/server                 # http://127.0.0.1:8080
//	go run ./examples/server -addr :9000     # every interface; -addr 9000 too
//	go run ./examples/server -config gateway.json -rate-limit 20/s
//	go run ./examples/server -db memory      # keep nothing across restarts
//	go run ./examples/server -db postgres://… -redis redis://…   # replicas
//
// Flags:
//
//	-addr        address to listen on (default 127.0.0.1:8080); a bare
//	             port means every interface, as :8080 does
//	-config      JSON file of keys, models and routes (default: the
//	             built-in demo configuration)
//	-rate-limit  rate limit of keys without one of their own, such as
//	             20/s, 600/m or unlimited (default: the file's
//	             rate_limit, else none)
//	-max-conns   connections served at once (default 1024); when all
//	             are open, the longest idle one gives way to a new
//	             client, and more wait while every one is busy
//	-db          where the state lives (default sqlite:gatewaykit.db):
//	             sqlite:PATH keeps keys' usage, stored responses,
//	             conversations, video tasks and videos in one SQLite
//	             file, which survives restarts and crashes; memory keeps
//	             them in memory, lost at exit; postgres://… keeps them in
//	             PostgreSQL, shared by every replica on that database
//	             (store/postgres)
//	-redis       a redis://… URL: rate limits shared by every replica on
//	             that server (package store/redis); -redis-prefix sets
//	             the prefix of its keys; -redis-fail open (the default)
//	             serves requests without rate limits while Redis cannot
//	             be reached, -redis-fail closed refuses them with 503
//	-video-lease how long a replica holds a video task without renewing
//	             it (default 1m); then another replica takes it over
//	-background-lease  the same for a background response (default 30s):
//	             then another replica runs it again if no client saw
//	             any of it, and fails it otherwise
//	-background-delay  the demo's pause before each token of a
//	             background response (default 200ms), to poll, cancel
//	             and resume one with curl or in the console
//	-admin-key   the admin key (default: $GATEWAY_ADMIN_KEY): with it,
//	             the admin API (package admin: keys created, changed and
//	             revoked, usage and cost read back) is served on
//	             -admin-addr, to requests that send it as a bearer token,
//	             and the video content route also accepts the admin
//	             console's sessions that it mints (POST
//	             /admin/v1/sessions; the cookie gatewaykit_session)
//	-admin-addr  address of the admin listener (default 127.0.0.1:8090),
//	             kept apart from the API's so that it can stay private: it
//	             serves Prometheus metrics at /metrics, and the admin API
//	             with -admin-key; empty for none
//
// The built-in demo models carry example prices (gateway.DemoFile), so
// that the admin API's usage shows a cost; a -config file's models may
// carry a "pricing" of their own (models.Pricing).
//
// GET /healthz (the process answers) and GET /readyz (its stores, the
// Redis limiter and the relay's upstreams answer; 503 otherwise) are on
// the main listener, without credentials. Traces are sent where the
// standard OTEL_* variables say (OTEL_TRACES_EXPORTER=console prints
// them), and are off when they are unset (package observe/tracing).
//
// The built-in keys are sk-demo (unlimited quota, no rate limit),
// sk-demo-empty (zero quota, to see the 403) and sk-demo-limited (5
// requests a minute, to see the 429). The banner, printed once the port
// is bound, names a URL a browser can open: the browser console (package
// console) is served at /, its files under /console/, and every other
// path is the gateway's.
//
// A -config file is JSON: {"rate_limit": ..., "keys": [...], "models":
// [...], "routes": [...]}, as documented by gateway.File; each key may set
// its quota, rate_limit, allowed_models, expires_at and disabled. At
// start the keys are written into the -db store (gateway.PutKeys, secret
// hashes only): their quota, limits and models come from the file, and
// their usage stays what the store recorded, so a restart never refunds
// a spent quota (a key's quota is its whole budget). Routes
// relay models to upstream OpenAI-compatible services (with failover, in
// the order given), which also mounts the access points of spec §4.4
// (embeddings, images, audio, moderations, rerank, the messages format,
// Gemini-style generateContent); every model without a route is answered
// by the demo backend. The wiring itself is package gateway's.
//
// The server has package gateway's connection limits (gateway.NewServer,
// gateway.LimitListener): request headers within 10s and of at most 64
// KiB (431 beyond), idle keep-alive connections closed after 2 minutes,
// and at most -max-conns connections. It sets no read or write timeout,
// which would cut streams.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/console"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/examples/internal/observability"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/listenaddr"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/redis"
	"github.com/gatewaykit/gatewaykit/telemetry"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

func main() {
	var o options
	flag.StringVar(&o.addr, "addr", "127.0.0.1:8080", "address to listen on (:8080 or a bare 8080: every interface)")
	flag.StringVar(&o.configPath, "config", "", "JSON file of keys and models (default: the built-in demo configuration)")
	flag.StringVar(&o.rateLimit, "rate-limit", "", `rate limit of keys without one of their own, such as 20/s, 600/m or unlimited (default: the config file's "rate_limit", else none)`)
	flag.IntVar(&o.maxConns, "max-conns", gateway.DefaultMaxConns, "connections served at once; when all are open, the longest idle one gives way to a new client")
	flag.StringVar(&o.db, "db", defaultDB, "where the state lives: sqlite:PATH (a SQLite file), memory, or postgres://… (shared by replicas)")
	flag.StringVar(&o.redis, "redis", "", "redis://… to share rate limits between replicas (default: in memory)")
	flag.StringVar(&o.redisPrefix, "redis-prefix", redis.DefaultPrefix, "prefix of the Redis keys of -redis")
	flag.TextVar(&o.redisFail, "redis-fail", auth.FailOpen, "while -redis cannot be reached: open serves requests without rate limits, closed refuses them with 503")
	flag.DurationVar(&o.videoLease, "video-lease", 0, "lease of a claimed video task, after which another replica takes it over (default 1m)")
	flag.DurationVar(&o.runLease, "background-lease", 0, "lease of a claimed background response, after which another replica takes it over or fails it (default 30s)")
	flag.DurationVar(&o.backgroundDelay, "background-delay", defaultBackgroundDelay, "the demo's pause before each token of a background response, to poll, cancel and resume it with curl")
	flag.StringVar(&o.adminKey, "admin-key", os.Getenv("GATEWAY_ADMIN_KEY"), "admin key of the admin API on -admin-addr (default $GATEWAY_ADMIN_KEY; none: no admin API)")
	flag.StringVar(&o.adminAddr, "admin-addr", defaultAdminAddr, "address of the admin listener: /metrics, and the admin API with -admin-key (empty: none)")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, logger); err != nil {
		logger.Error("server stopped", "error", err)
		os.Exit(1)
	}
}

// options are the example server's flags.
type options struct {
	addr       string
	configPath string
	rateLimit  string
	maxConns   int
	db         string
	redis      string
	// redisPrefix starts the Redis keys of -redis.
	redisPrefix string
	// redisFail is what the gateway does while -redis cannot be reached.
	redisFail  auth.LimiterFailure
	videoLease time.Duration
	// runLease and backgroundDelay: -background-lease, -background-delay.
	runLease        time.Duration
	backgroundDelay time.Duration
	// adminKey, if set, mounts the admin API on the admin listener at
	// adminAddr.
	adminKey string
	// adminAddr is the admin listener's address (-admin-addr); empty
	// means none.
	adminAddr string
	// textOptions configure the demo text backend; nil means the
	// command's pacing of stream chunks.
	textOptions []demo.TextOption
}

// withConsole serves the browser console (package console) at / and
// /console/ in front of h, the gateway, which answers every other path:
// the API, and its JSON 404 for unknown paths.
func withConsole(h http.Handler, adminURL string) http.Handler {
	mux := http.NewServeMux()
	console.Register(mux, console.NewHandler(console.Config{AdminURL: adminURL}))
	mux.Handle("/", h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		// The console's routes are not the gateway's: name them for the
		// metrics and traces, which the gateway does for its own.
		if info := telemetry.FromContext(r.Context()); info != nil && info.Route == "" && r.Pattern != "" && r.Pattern != "/" {
			info.Route = r.Pattern
		}
	})
}

// loadConfig reads the -config file, or takes the built-in demo
// configuration; a -rate-limit flag replaces the file's default rate
// limit.
func loadConfig(path, rateLimit string) (gateway.File, error) {
	c := gateway.DemoFile()
	if path != "" {
		var err error
		if c, err = gateway.LoadFile(path); err != nil {
			return gateway.File{}, err
		}
	}
	if rateLimit != "" {
		l, err := auth.ParseLimit(rateLimit)
		if err != nil {
			return gateway.File{}, fmt.Errorf("-rate-limit: %w", err)
		}
		c.RateLimit = l
	}
	return c, nil
}

// newGateway assembles the example server: the demo backends for every
// endpoint family, the stores st, the keys and models of c. The keys of
// c are written into st (gateway.PutKeys): their limits come from c, and
// their usage stays what st recorded.
func newGateway(c gateway.File, st *stores, logger *slog.Logger, textOpts ...demo.TextOption) (*gateway.Gateway, error) {
	if err := gateway.PutKeys(context.Background(), st.putter, c.Keys); err != nil {
		return nil, err
	}
	st.observe.WatchUsage(st.putter) // the store itself, not the cache of st.keys
	rl, err := c.Relay(append([]relay.Option{relay.WithLogger(logger)}, st.observe.RelayOptions(relay.NewTransport())...)...)
	if err != nil {
		return nil, err
	}
	text := demo.NewTextBackend(textOpts...)
	var sessions auth.SessionAuthenticator
	if st.sessions != nil {
		sessions = st.sessions
	}
	authOpts := st.observe.AuthOptions()
	if st.limiter != nil {
		authOpts = append(authOpts, auth.WithLimiter(st.limiter), auth.WithLimiterFailure(st.limiterFailure))
	}
	return gateway.New(gateway.Config{
		Keys:          st.keys,
		Catalog:       models.NewMemoryCatalog(c.Models...),
		Chat:          text.Chat(),
		Completions:   text.Completions(),
		Responses:     text.Responses(),
		ResponseStore: st.observe.Responses(st.responses),
		// The conversations of /v1/conversations, in the same store.
		ConversationStore: st.conversations,
		Videos:            demo.NewVideoGenerator(),
		Embeddings:        demo.NewEmbeddingBackend(),
		Moderations:       demo.NewModerationBackend(),
		Rerank:            demo.NewRerankBackend(),
		Images:            demo.NewImageBackend(),
		Audio:             demo.NewAudioBackend(),
		Tasks:             st.observe.Tasks(st.tasks),
		Contents:          st.contents,
		// The admin console's sessions, on the content route only.
		ContentSessions:   sessions,
		RunnerOptions:     []runner.Option{runner.WithLease(st.videoLease)},
		Runs:              st.runs,
		BackgroundOptions: []responses.BackgroundOption{responses.WithLease(st.runLease)},
		Relay:             rl,
		RateLimit:         c.RateLimit,
		AuthOptions:       authOpts,
		Logger:            logger,
		AccessLog:         true,
		ReadyChecks:       readyChecks(st),
	})
}

// run serves until ctx is done, then shuts down gracefully. The banner
// goes to stdout once the port is bound.
func run(ctx context.Context, o options, stdout io.Writer, logger *slog.Logger) error {
	c, err := loadConfig(o.configPath, o.rateLimit)
	if err != nil {
		return err
	}
	if o.maxConns < 1 {
		return fmt.Errorf("-max-conns %d: want at least 1", o.maxConns)
	}
	if o.textOptions == nil {
		o.textOptions = []demo.TextOption{demo.WithChunkDelay(20 * time.Millisecond), demo.WithBackgroundChunkDelay(o.backgroundDelay)}
	}
	st, err := openStores(ctx, o.db, logger)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.close(); cerr != nil {
			logger.Error("closing the stores", "error", cerr)
		}
	}()
	st.videoLease, st.limiterFailure = o.videoLease, o.redisFail
	st.runLease = o.runLease
	if o.adminKey != "" {
		st.sessions = admin.NewSessions(o.adminKey, 0)
	}
	if o.redis != "" {
		if err := openRedis(ctx, st, o.redis, o.redisPrefix); err != nil {
			return err
		}
	}
	if st.observe, err = observability.New(ctx); err != nil {
		return err
	}
	defer func() {
		if serr := st.observe.Shutdown(context.Background()); serr != nil {
			logger.Error("flushing the traces", "error", serr)
		}
	}()
	g, err := newGateway(c, st, logger, o.textOptions...)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", listenaddr.Normalize(o.addr))
	if err != nil {
		return err
	}
	adminMux, err := newAdminMux(o, st, c, logger)
	if err != nil {
		l.Close()
		return err
	}
	var al net.Listener // the admin listener
	if o.adminAddr != "" {
		if al, err = net.Listen("tcp", listenaddr.Normalize(o.adminAddr)); err != nil {
			l.Close()
			return adminAddrError(o.adminAddr, err)
		}
	}
	go g.Run(context.Background())

	// The console's admin views call the admin API on its own listener
	// (it answers CORS for them); without an admin key they are hidden.
	adminURL := ""
	if al != nil && o.adminKey != "" {
		adminURL = listenaddr.URL(al.Addr())
	}
	// The limits of package gateway: header read timeout, idle timeout,
	// header size, and at most maxConns connections at once.
	srv := gateway.NewServer(l.Addr().String(), st.observe.Handler(withConsole(g, adminURL)))
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(gateway.LimitListener(l, o.maxConns)) }()
	var adminSrv *http.Server
	if al != nil {
		st.observe.Register(adminMux)
		adminSrv = gateway.NewServer(al.Addr().String(), adminMux)
		go func() { errc <- adminSrv.Serve(gateway.LimitListener(al, 64)) }()
	}
	printBanner(stdout, listenaddr.URL(l.Addr()), c, o.configPath == "", st.where)
	if al != nil {
		fmt.Fprintf(stdout, "  metrics: %s/metrics\n", listenaddr.URL(al.Addr()))
	}
	if adminURL != "" {
		fmt.Fprintf(stdout, "  admin API: %s/admin/v1/ (Authorization: Bearer <the admin key>)\n", adminURL)
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down; letting in-flight requests finish", "deadline", "30s")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if adminSrv != nil {
		if aerr := adminSrv.Shutdown(sctx); err == nil {
			err = aerr
		}
	}
	if rerr := g.Shutdown(sctx); err == nil {
		err = rerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// defaultAdminAddr is the -admin-addr of a server started without one:
// the loopback interface only.
const defaultAdminAddr = "127.0.0.1:8090"

// defaultBackgroundDelay is the demo's pace for background responses
// (-background-delay): 200 ms a token, about 12 s for a reply of the demo
// model, long enough to poll, cancel and resume one with curl.
const defaultBackgroundDelay = 200 * time.Millisecond

// adminAddrError is the error of a failed listen on -admin-addr addr. A
// port in use is most often another gateway's admin listener, as when a
// second replica starts on the same machine with the default: say what
// to do.
func adminAddrError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("-admin-addr %s: %w (another process, such as another gateway on this machine, listens there: give each its own -admin-addr, or -admin-addr '' for none)", addr, err)
	}
	return fmt.Errorf("-admin-addr: %w", err)
}

// newAdminMux returns the mux of the admin listener (-admin-addr): the
// admin API (package admin) when an admin key is given, on the key store
// that the gateway uses (through its cache, so that a key revoked there
// gets 401 at once). The metrics (package observe/metrics) are added to
// it by run.
func newAdminMux(o options, st *stores, c gateway.File, logger *slog.Logger) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	if o.adminKey != "" {
		keys, ok := st.keys.(admin.Store)
		if !ok {
			return nil, fmt.Errorf("-admin-key: the key store of -db %s cannot be administered", o.db)
		}
		admin.Register(mux, admin.NewHandler(keys, admin.WithAdminKey(o.adminKey), admin.WithSessions(st.sessions),
			admin.WithCatalog(models.NewMemoryCatalog(c.Models...)), admin.WithLogger(logger)))
	}
	return mux, nil
}

func printBanner(w io.Writer, url string, c gateway.File, builtIn bool, where string) {
	fmt.Fprintf(w, "gatewaykit example server on %s\n", url)
	fmt.Fprintf(w, "  console: %s/ (open it in a browser)\n", url)
	fmt.Fprintf(w, "  state: %s\n", where)
	if builtIn {
		fmt.Fprintln(w, "built-in demo configuration:")
		fmt.Fprintln(w, "  keys:   sk-demo (unlimited quota, no rate limit), sk-demo-empty (zero quota: 403),")
		fmt.Fprintln(w, "          sk-demo-limited (unlimited quota, 5 requests a minute: 429)")
		fmt.Fprintf(w, "  the console with sk-demo filled in: %s/#key=sk-demo\n", url)
	}
	if !c.RateLimit.Unlimited() {
		fmt.Fprintf(w, "  rate limit of keys without their own: %s\n", c.RateLimit)
	}
	fmt.Fprint(w, "  models:")
	for _, m := range c.Models {
		fmt.Fprintf(w, " %s", m.ID)
	}
	fmt.Fprintln(w)
	for _, rc := range c.Routes {
		fmt.Fprintf(w, "  relayed: %s →", rc.Model)
		for _, u := range rc.Upstreams {
			fmt.Fprintf(w, " %s", u.BaseURL)
		}
		fmt.Fprintln(w)
	}
}
