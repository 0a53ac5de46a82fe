package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// Config is what [New] assembles. Keys and Catalog are required; a nil
// backend leaves its endpoints unmounted.
type Config struct {
	// Keys authenticates every request.
	Keys auth.KeyStore
	// Catalog is the model list, and the models the generation endpoints
	// accept.
	Catalog models.Catalog

	// Chat serves POST /v1/chat/completions.
	Chat chat.Backend
	// Completions serves POST /v1/completions.
	Completions completions.Backend
	// Responses serves POST /v1/responses, its compact, retrieve and
	// delete routes.
	Responses responses.Backend
	// ResponseStore keeps responses for previous_response_id and
	// retrieval; nil means the default of [responses.WithStore] (an
	// in-memory store).
	ResponseStore responses.Store

	// Videos generates videos; with it, the video task endpoints are
	// mounted and [Gateway.Run] runs a [videos.Runner].
	Videos videos.Generator
	// Tasks keeps the video tasks; nil means a new [videos.MemoryStore].
	Tasks videos.TaskStore
	// Contents keeps finished videos and thumbnails; nil means a new
	// [videos.MemoryContentStore].
	Contents videos.ContentStore
	// RunnerOptions configure the video runner.
	RunnerOptions []videos.RunnerOption

	// Routes, when set, adds routes to the mux, behind the same
	// authentication and rate limit (for example relay access points).
	Routes func(mux *http.ServeMux)

	// RateLimit is the per-key rate limit of keys that have none of their
	// own; zero means none.
	RateLimit auth.Limit
	// AuthOptions are given to the auth middleware after the gateway's
	// own (logger, rate limit), for example auth.WithErrorShape so that
	// extra routes of another format refuse in their own error shape.
	AuthOptions []auth.Option
	// Logger receives the handlers' logs and, with AccessLog, one line per
	// request. Nil discards everything.
	Logger *slog.Logger
	// AccessLog logs one line per request at info level: method, path,
	// status, latency and the key id (never the secret).
	AccessLog bool
}

// Gateway is the assembled API: an http.Handler, and the video runner
// behind it. Create it with [New].
type Gateway struct {
	handler http.Handler
	runner  *videos.Runner // nil without Config.Videos
}

// New assembles the gateway described by c. It returns an error when a
// required field is missing.
func New(c Config) (*Gateway, error) {
	switch {
	case c.Keys == nil:
		return nil, errors.New("gateway: New: nil Keys")
	case c.Catalog == nil:
		return nil, errors.New("gateway: New: nil Catalog")
	}
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	g := &Gateway{}
	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(c.Catalog, models.WithLogger(logger), models.WithAllowed(keyAllows)))
	if c.Chat != nil {
		mux.Handle(chat.Pattern, chat.NewHandler(c.Catalog, c.Chat, chat.WithLogger(logger)))
	}
	if c.Completions != nil {
		mux.Handle(completions.Pattern, completions.NewHandler(c.Catalog, c.Completions, completions.WithLogger(logger)))
	}
	if c.Responses != nil {
		opts := []responses.Option{responses.WithLogger(logger)}
		if c.ResponseStore != nil {
			opts = append(opts, responses.WithStore(c.ResponseStore))
		}
		responses.Register(mux, responses.NewHandler(c.Catalog, c.Responses, opts...))
	}
	if c.Videos != nil {
		tasks, contents := c.Tasks, c.Contents
		if tasks == nil {
			tasks = videos.NewMemoryStore()
		}
		if contents == nil {
			contents = videos.NewMemoryContentStore()
		}
		opts := append([]videos.RunnerOption{videos.WithRunnerLogger(logger)}, c.RunnerOptions...)
		g.runner = videos.NewRunner(tasks, c.Videos, contents, opts...)
		videos.Register(mux, videos.NewHandler(tasks, c.Catalog, contents,
			videos.WithNotify(g.runner.Wake), videos.WithLogger(logger)))
	}
	if c.Routes != nil {
		c.Routes(mux)
	}

	authOpts := []auth.Option{auth.WithLogger(logger)}
	if c.RateLimit.Requests > 0 {
		authOpts = append(authOpts, auth.WithDefaultRateLimit(c.RateLimit))
	}
	authOpts = append(authOpts, c.AuthOptions...)
	if c.AccessLog {
		g.handler = logRequests(logger, auth.Middleware(c.Keys, authOpts...)(captureKey(mux)))
	} else {
		g.handler = auth.Middleware(c.Keys, authOpts...)(mux)
	}
	return g, nil
}

// ServeHTTP serves the API.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.handler.ServeHTTP(w, r)
}

// Run runs the video runner until ctx is done or [Gateway.Shutdown] is
// called (see [videos.Runner.Run]). Without a video generator it returns
// nil at once. Call it once, in its own goroutine.
func (g *Gateway) Run(ctx context.Context) error {
	if g.runner == nil {
		return nil
	}
	return g.runner.Run(ctx)
}

// Shutdown stops the video runner from taking new tasks and waits, until
// ctx is done, for the running ones to finish. Shut the http.Server down
// first, so that no new task arrives.
func (g *Gateway) Shutdown(ctx context.Context) error {
	if g.runner == nil {
		return nil
	}
	return g.runner.Shutdown(ctx)
}

// keyAllows lists only the models that the request's key may use, as the
// generation handlers allow only those.
func keyAllows(ctx context.Context, id string) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return !ok || p.AllowsModel(id)
}
