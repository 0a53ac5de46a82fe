// Command server runs the whole gatewaykit gateway on in-memory defaults:
// the demo backend, the built-in demo keys and models, chat completions,
// legacy completions, responses (with stored conversations), the model
// list in its three formats, and video tasks.
//
//	go run ./examples/server                 # http://127.0.0.1:8080
//	go run ./examples/server -addr :9000
//	go run ./examples/server -config gateway.json
//
// A -config file is JSON: {"keys": [...], "models": [...], "routes": [...]},
// as documented by gateway.File. Routes relay models to upstream
// OpenAI-compatible services (with failover, in the order given), which
// also mounts the access points of spec §4.4 (embeddings, images, audio,
// moderations, rerank, the messages format, Gemini-style generateContent);
// every model without a route is answered by the demo backend. The wiring
// itself is package gateway's.
package main

import (
	"context"
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
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	configPath := flag.String("config", "", "JSON file of keys and models (default: the built-in demo configuration)")
	rateLimit := flag.String("rate-limit", "", `rate limit of keys without one of their own, such as 20/s, 600/m or unlimited (default: the config file's "rate_limit", else none)`)
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*addr, *configPath, *rateLimit, logger); err != nil {
		logger.Error("server stopped", "error", err)
		os.Exit(1)
	}
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
// endpoint family, in-memory stores, the keys and models of c.
func newGateway(c gateway.File, logger *slog.Logger, textOpts ...demo.TextOption) (*gateway.Gateway, error) {
	keys, err := gateway.NewKeyStore(context.Background(), c.Keys)
	if err != nil {
		return nil, err
	}
	rl, err := c.Relay(relay.WithLogger(logger))
	if err != nil {
		return nil, err
	}
	text := demo.NewTextBackend(textOpts...)
	return gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(c.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(),
		Relay:       rl,
		RateLimit:   c.RateLimit,
		Logger:      logger,
		AccessLog:   true,
	})
}

func run(addr, configPath, rateLimit string, logger *slog.Logger) error {
	c, err := loadConfig(configPath, rateLimit)
	if err != nil {
		return err
	}
	g, err := newGateway(c, logger, demo.WithChunkDelay(20*time.Millisecond))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go g.Run(context.Background())

	srv := &http.Server{Addr: addr, Handler: g, ReadHeaderTimeout: 10 * time.Second}
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
	if rerr := g.Shutdown(sctx); err == nil {
		err = rerr
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func printBanner(addr string, c gateway.File, builtIn bool) {
	fmt.Printf("gatewaykit example server on http://%s\n", addr)
	if builtIn {
		fmt.Println("built-in demo configuration:")
		fmt.Println("  keys:   sk-demo (unlimited quota, no rate limit), sk-demo-empty (zero quota: 403),")
		fmt.Println("          sk-demo-limited (unlimited quota, 5 requests a minute: 429)")
	}
	if !c.RateLimit.Unlimited() {
		fmt.Printf("  rate limit of keys without their own: %s\n", c.RateLimit)
	}
	fmt.Print("  models:")
	for _, m := range c.Models {
		fmt.Printf(" %s", m.ID)
	}
	fmt.Println()
	for _, rc := range c.Routes {
		fmt.Printf("  relayed: %s →", rc.Model)
		for _, u := range rc.Upstreams {
			fmt.Printf(" %s", u.BaseURL)
		}
		fmt.Println()
	}
}
