// Command embed is the README's "Embed it in your router", verbatim (a
// test checks that the README's snippets are in this file): the model
// list, chat and completions mounted on your own mux behind API keys, or
// with -gateway the whole API from package gateway, served with package
// gateway's connection limits.
//
//	go run ./examples/embed            # http://127.0.0.1:8080, key sk-team-a-example
//	go run ./examples/embed -gateway   # the whole API, video tasks too
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// newHandler mounts the model list, chat and completions behind API keys.
func newHandler(ctx context.Context) (http.Handler, error) {
	keys := auth.NewMemoryKeyStore()
	// A key is "sk-" and letters, digits, - or _; mint real ones with auth.NewSecret.
	err := keys.Add(ctx, "sk-team-a-example", auth.Key{ID: "k1", Owner: "team-a", Quota: auth.UnlimitedQuota()})
	if err != nil {
		return nil, err
	}
	catalog := models.NewMemoryCatalog(demo.TextModels()...) // demo-chat, demo-reasoner, demo-instruct
	text := demo.NewTextBackend()                            // or your own chat.Backend

	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(catalog))
	chat.Register(mux, chat.NewHandler(catalog, text.Chat()))
	completions.Register(mux, completions.NewHandler(catalog, text.Completions()))
	return auth.Middleware(keys)(mux), nil
}

// newGateway assembles the whole API in one call: every family whose
// backend is given, the video runner, the auth middleware, an access log.
func newGateway(ctx context.Context) (*gateway.Gateway, error) {
	keys := auth.NewMemoryKeyStore()
	err := keys.Add(ctx, "sk-team-a-example", auth.Key{ID: "k1", Owner: "team-a", Quota: auth.UnlimitedQuota()})
	if err != nil {
		return nil, err
	}
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(append(demo.TextModels(), demo.VideoModels()...)...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(),
		AccessLog:   true,
	})
	if err != nil {
		return nil, err
	}
	go g.Run(ctx) // the video runner, until ctx is done
	return g, nil
}

func main() {
	whole := flag.Bool("gateway", false, "serve the whole API with package gateway")
	flag.Parse()
	ctx := context.Background()
	var h http.Handler
	var err error
	if *whole {
		h, err = newGateway(ctx)
	} else {
		h, err = newHandler(ctx)
	}
	if err != nil {
		log.Fatal(err)
	}
	// Package gateway's limits: header timeout and size, idle timeout, and connections.
	l, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	srv := gateway.NewServer(l.Addr().String(), h)
	log.Fatal(srv.Serve(gateway.LimitListener(l, gateway.DefaultMaxConns)))
}
