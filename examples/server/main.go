// Command server runs the whole gatewaykit gateway on in-memory defaults:
// the demo backend, the built-in demo keys and models, chat completions,
// legacy completions, the model list in its three formats, and video tasks.
//
//	go run ./examples/server                 # http://127.0.0.1:8080
//	go run ./examples/server -addr :9000
//	go run ./examples/server -config gateway.json
//
// A -config file is JSON: {"keys": [...], "models": [...]}, where each key
// is {"secret": "sk-…", "id": "…", "owner": "…", "quota": N or null for
// unlimited} and models use the form documented in package models.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	configPath := flag.String("config", "", "JSON file of keys and models (default: the built-in demo configuration)")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*addr, *configPath, logger); err != nil {
		logger.Error("server stopped", "error", err)
		os.Exit(1)
	}
}

// demoRateLimit is the example server's per-key rate limit: bursts of 20
// requests, refilled at 20 a second. Thirty quick curls show the 429.
var demoRateLimit = auth.Limit{Requests: 20, Period: time.Second}

// keyConfig is one key of a -config file.
type keyConfig struct {
	Secret string `json:"secret"`
	ID     string `json:"id"`
	Owner  string `json:"owner"`
	Quota  *int64 `json:"quota"` // null or absent: unlimited
}

type config struct {
	Keys   []keyConfig    `json:"keys"`
	Models []models.Model `json:"models"`
}

// demoConfig is the built-in configuration used without -config.
func demoConfig() config {
	zero := int64(0)
	ms := demo.TextModels()
	ms = append(ms, models.Model{ID: "demo-instruct", OwnedBy: "gatewaykit", Created: 1735689600,
		Description: "Deterministic demo model for legacy completions only.", EndpointTypes: []models.EndpointType{models.Compat}})
	ms = append(ms, demo.VideoModels()...)
	return config{
		Keys: []keyConfig{
			{Secret: "sk-demo", ID: "key-demo", Owner: "demo"},
			{Secret: "sk-demo-empty", ID: "key-demo-empty", Owner: "demo", Quota: &zero},
		},
		Models: ms,
	}
}

func loadConfig(path string) (config, error) {
	if path == "" {
		return demoConfig(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return config{}, err
	}
	var c config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return config{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := models.ValidateModels(c.Models); err != nil {
		return config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// newGateway wires every handler of the gateway on a mux behind the auth
// middleware and a request logger. The returned runner generates videos;
// the caller runs and shuts it down.
func newGateway(c config, logger *slog.Logger, textOpts ...demo.TextOption) (http.Handler, *videos.Runner, error) {
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	for _, k := range c.Keys {
		q := auth.UnlimitedQuota()
		if k.Quota != nil {
			q = auth.LimitedQuota(*k.Quota)
		}
		id := k.ID
		if id == "" {
			id = auth.HashSecret(k.Secret)[:12]
		}
		if err := keys.Add(ctx, k.Secret, auth.Key{ID: id, Owner: k.Owner, Quota: q}); err != nil {
			return nil, nil, fmt.Errorf("key %s: %w", id, err)
		}
	}
	catalog := models.NewMemoryCatalog(c.Models...)
	text := demo.NewTextBackend(textOpts...)

	tasks, contents := videos.NewMemoryStore(), videos.NewMemoryContentStore()
	runner := videos.NewRunner(tasks, demo.NewVideoGenerator(), contents)

	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(catalog, models.WithLogger(logger), models.WithAllowed(keyAllows)))
	mux.Handle(chat.Pattern, chat.NewHandler(catalog, text.Chat(), chat.WithLogger(logger)))
	mux.Handle(completions.Pattern, completions.NewHandler(catalog, text.Completions(), completions.WithLogger(logger)))
	videos.Register(mux, videos.NewHandler(tasks, catalog, contents, videos.WithNotify(runner.Wake), videos.WithLogger(logger)))

	return logRequests(logger, auth.Middleware(keys, auth.WithLogger(logger), auth.WithDefaultRateLimit(demoRateLimit))(captureKey(mux))), runner, nil
}

func run(addr, configPath string, logger *slog.Logger) error {
	c, err := loadConfig(configPath)
	if err != nil {
		return err
	}
	h, runner, err := newGateway(c, logger, demo.WithChunkDelay(20*time.Millisecond))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go runner.Run(context.Background())

	srv := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	printBanner(addr, c, configPath == "")

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down; letting in-flight requests finish", "deadline", "30s")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if rerr := runner.Shutdown(sctx); err == nil {
		err = rerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func printBanner(addr string, c config, builtIn bool) {
	fmt.Printf("gatewaykit example server on http://%s\n", addr)
	if builtIn {
		fmt.Println("built-in demo configuration:")
		fmt.Println("  keys:   sk-demo (unlimited quota), sk-demo-empty (zero quota)")
	}
	fmt.Print("  models:")
	for _, m := range c.Models {
		fmt.Printf(" %s", m.ID)
	}
	fmt.Println()
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request: method, path, status, latency
// and, when authenticated, the key id (never the secret).
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		var keyID string
		next.ServeHTTP(rec, r.WithContext(withKeyCapture(r.Context(), &keyID)))
		logger.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.Int("status", rec.status), slog.Duration("latency", time.Since(start)),
			slog.String("key_id", keyID))
	})
}

type keyCaptureKey struct{}

func withKeyCapture(ctx context.Context, dst *string) context.Context {
	return context.WithValue(ctx, keyCaptureKey{}, dst)
}

// captureKey runs inside the auth middleware and hands the key id of the
// principal out to logRequests, which runs outside it.
func captureKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dst, ok := r.Context().Value(keyCaptureKey{}).(*string); ok {
			if p, ok := auth.PrincipalFrom(r.Context()); ok {
				*dst = p.KeyID
			}
		}
		next.ServeHTTP(w, r)
	})
}

// keyAllows lists only the models that the request's key may use, as the
// generation handlers allow only those.
func keyAllows(ctx context.Context, id string) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return !ok || p.AllowsModel(id)
}
