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
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// Config is what [New] assembles. Keys and Catalog are required; a nil
// backend leaves its endpoints unmounted.
type Config struct {
	// Keys authenticates every request, and holds the quotas that requests
	// and video tasks reserve and settle (the video runner is given it
	// with videos.WithKeyStore).
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

	// Relay, when set, relays the models it routes to their upstreams,
	// and serves the access points of spec §4.4 (embeddings, images,
	// audio, moderations, rerank, the messages format, the Gemini-style
	// generateContent) through it: chat, completions, responses and video
	// requests for a routed model go to the relay's backends, and those
	// for any other model to the backends above. A family without a
	// backend of its own is relayed whole. The auth middleware then
	// refuses requests of the messages and Gemini formats in their own
	// error shapes ([relay.AccessErrorShape]), and client headers such as
	// OpenAI-Organization and Idempotency-Key are forwarded
	// ([relay.ForwardHeaders]).
	Relay *relay.Relay

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

	if c.Relay != nil {
		c = withRelay(c)
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
		opts := append([]videos.RunnerOption{videos.WithRunnerLogger(logger), videos.WithKeyStore(c.Keys)}, c.RunnerOptions...)
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
	var h http.Handler = mux
	if c.AccessLog {
		h = captureKey(h)
	}
	h = auth.Middleware(c.Keys, authOpts...)(h)
	if c.Relay != nil {
		h = relay.ForwardHeaders(h)
	}
	if c.AccessLog {
		h = logRequests(logger, h)
	}
	g.handler = h
	return g, nil
}

// withRelay routes c's families through c.Relay and adds its access
// points.
func withRelay(c Config) Config {
	r := c.Relay
	c.Chat = chatRouter{newByModel[chat.Backend](r, r.Chat(), c.Chat)}
	c.Completions = completionsRouter{newByModel[completions.Backend](r, r.Completions(), c.Completions)}
	c.Responses = responsesRouter{newByModel[responses.Backend](r, r.Responses(), c.Responses)}
	c.Videos = videoRouter{newByModel[videos.Generator](r, r.Videos(), c.Videos)}
	routes, catalog := c.Routes, c.Catalog
	c.Routes = func(mux *http.ServeMux) {
		relay.RegisterAccess(mux, relay.NewAccessHandler(r, catalog))
		if routes != nil {
			routes(mux)
		}
	}
	c.AuthOptions = append([]auth.Option{auth.WithErrorShape(relay.AccessErrorShape)}, c.AuthOptions...)
	return c
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
