package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/internal/noroute"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/rerank"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/router"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// Config is what [New] assembles. Keys and Catalog are required; a nil
// backend leaves its endpoints unmounted.
type Config struct {
	// Keys authenticates every request, and holds the quotas that requests
	// and video tasks reserve and settle (the video runner is given it
	// with runner.WithKeyStore).
	Keys auth.KeyStore
	// Authenticators, when set, are the authenticators of every request,
	// asked in order (auth.WithAuthenticators). Charge their principals to
	// Keys, against which the video runner settles tasks too: for
	// example, an embedder's own session, a key of Keys named by its id,
	// before API keys,
	//
	//	Authenticators: []auth.Authenticator{auth.Identities(keys, sessionUser), auth.APIKeys(keys)},
	//
	// (auth.Identities needs a Keys that finds keys by id, an
	// auth.IDLookup, as the stores of the kit do). Nil means API keys
	// alone, auth.APIKeys(Keys). ContentSessions are asked after these,
	// on the content route.
	Authenticators []auth.Authenticator
	// Catalog is the model list, and the models the generation endpoints
	// accept.
	Catalog models.Catalog

	// Chat serves POST /v1/chat/completions, and POST /v1/messages (the
	// messages format, translated by package messages).
	Chat chat.Backend
	// Completions serves POST /v1/completions.
	Completions completions.Backend
	// Responses serves POST /v1/responses, its compact, retrieve and
	// delete routes, and the routes of /v1/conversations.
	// fromchat.New(Chat) (package responses/fromchat) serves them over
	// the chat backend, with no backend of their own to write; nil leaves
	// them unmounted, as for every family, rather than keep conversations
	// (ResponseStore, ConversationStore) the embedder did not ask for.
	Responses responses.Backend
	// ResponseStore keeps responses for previous_response_id and
	// retrieval; nil means the default of [responses.WithStore] (an
	// in-memory store).
	ResponseStore responses.Store
	// ConversationStore keeps the conversations of /v1/conversations
	// (package conversations), mounted with the responses routes, which
	// continue them ("conversation" on POST /v1/responses; with a Relay
	// too, the relayed upstream being sent the conversation's items);
	// nil means a new [conversations.MemoryStore] with the default
	// bounds.
	ConversationStore conversations.Store
	// Runs keeps the background responses ("background": true on POST
	// /v1/responses), which [Gateway.Run] runs on a
	// [responses.Background] that settles their quota against Keys; nil
	// means a new [responses.MemoryRunStore] (runs live as long as the
	// process). Use the store of a shared database for several replicas.
	Runs responses.RunStore
	// BackgroundOptions configure the runner of the background
	// responses (workers, lease, retention…).
	BackgroundOptions []responses.BackgroundOption

	// Videos generates videos; with it, the video task endpoints are
	// mounted and [Gateway.Run] runs a [runner.Runner]. A generator that
	// is also a [videos.Submitter] (the relay's) starts each task before
	// the create request is answered ([videos.WithSubmitter]).
	Videos videos.Generator
	// Tasks keeps the video tasks; nil means a new [videos.MemoryStore]
	// with the default bounds (see the package documentation, Limits).
	Tasks videos.TaskStore
	// Contents keeps finished videos and thumbnails; nil means a new
	// [videos.MemoryContentStore] with the default bounds.
	Contents videos.ContentStore
	// RunnerOptions configure the video runner. A relayed task holds one
	// of its workers (4 by default) while it is polled upstream: raise
	// runner.WithWorkers to the relayed tasks you expect at once, or the
	// others wait queued, at progress 0, while their upstream tasks run.
	RunnerOptions []runner.Option
	// ContentSessions, when set, lets the video content route, GET and
	// HEAD /v1/videos/{task_id}/content, accept an admin-console session
	// in place of an API key (spec §4.7, §5.3): a request that carries no
	// API key is asked of it (auth.WithSessionAuthenticator). On every
	// other route a session counts for nothing: a request without an API
	// key is 401 missing_authorization, whatever session it carries. The
	// session's principal sees the tasks of its Owner's account, as the
	// account's keys do (auth.AccountOwner). admin.Sessions is one: minted
	// by the admin API, carried in a cookie. It takes the place of a
	// session authenticator in AuthOptions, and is unused without Videos.
	// Nil means no sessions.
	ContentSessions auth.SessionAuthenticator
	// PublicBaseURL is the absolute URL under which clients reach the
	// gateway, such as "https://api.example.com"; the metadata url and
	// thumbnail_url of completed video tasks are built under it
	// ([videos.WithPublicURL]). Empty means paths relative to the client's
	// origin ("/v1/videos/{task_id}/content"); they are never built from
	// the request's Host header.
	PublicBaseURL string

	// Embeddings serves POST /v1/embeddings, Moderations POST
	// /v1/moderations, Rerank POST /v1/rerank, Images POST
	// /v1/images/generations (and the image files of its URL replies,
	// images.PatternFile), Audio POST /v1/audio/speech,
	// /v1/audio/transcriptions and /v1/audio/translations. A nil backend
	// leaves its access points unmounted (or, with a relay, relayed
	// only). With a relay, the requests for models that it routes to
	// OpenAI-compatible upstreams are passed through, and the others come
	// to these backends (relay.WithFallback).
	Embeddings  embeddings.Backend
	Moderations moderations.Backend
	Rerank      rerank.Backend
	Images      images.Backend
	Audio       audio.Backend
	// ImageURLKey signs the URLs of the image files that the gateway
	// serves (images.WithURLKey); nil means a random key per gateway, so
	// that URLs stop working when it restarts and differ between
	// replicas: give replicas behind one address the same key. The URLs
	// are built under PublicBaseURL.
	ImageURLKey []byte

	// Relay, when set, relays the models it routes to their upstreams,
	// and serves the access points of spec §4.4 (embeddings, images,
	// audio, moderations, rerank, the messages format, the Gemini-style
	// generateContent) through it: chat, completions, responses and video
	// requests for a routed model go to the relay's backends, and those
	// for any other model to the backends above. A family without a
	// backend of its own is relayed whole. Client headers such as
	// OpenAI-Organization and Idempotency-Key are forwarded
	// ([relay.ForwardHeaders]).
	Relay *relay.Relay

	// Routes, when set, adds routes to the mux, behind the same
	// authentication and rate limit (for example relay access points). An
	// access point that Routes mounts (the messages format or the
	// Gemini-style generateContent, say) replaces the one the gateway
	// would serve itself; with a Relay, Routes must not mount the relay's
	// access points, which the gateway mounts.
	// What no route serves is answered with a JSON 404 not_found, or 405
	// method_not_allowed with an Allow header for a path that other
	// methods serve, in the error shape of the path's family — unless
	// Routes mounts a catch-all ("/") of its own.
	Routes func(mux *http.ServeMux)

	// BodyReadTimeout bounds the time a client has to send a request's
	// body ([BodyLimits].ReadTimeout): 0 means DefaultBodyReadTimeout
	// (60s), a negative value none.
	BodyReadTimeout time.Duration
	// MaxBodyBytesInFlight bounds the bytes of the bodies of all requests
	// being served at once ([BodyLimits].MaxBytesInFlight): 0 means
	// DefaultMaxBodyBytesInFlight (256 MiB), a negative value no bound.
	MaxBodyBytesInFlight int64
	// MaxRequestBytes is the body limit of the text endpoints (chat
	// completions, completions, responses), given to their
	// WithMaxRequestBytes: 0 means theirs (8 MiB).
	MaxRequestBytes int64
	// MaxVideoRequestBytes is the body limit of the video create paths,
	// given to videos.WithMaxRequestBytes: 0 means its default (32 MiB).
	MaxVideoRequestBytes int64

	// Interceptors run around every call that the gateway's handlers
	// answer (endpoint.WithInterceptors; videos.WithInterceptors at the
	// creation of a task), the first outermost: chat, completions,
	// responses, messages, Gemini-style, embeddings, moderations, rerank,
	// images, audio and videos, their own backends' and the relay's
	// backends' replies alike. The requests that the relay passes through
	// whole (the access points of spec §4.4 for the models it routes to
	// upstreams of their own format) reach no handler of the gateway and
	// run none. Nil means none.
	Interceptors []endpoint.Interceptor

	// RateLimit is the per-key rate limit of keys that have none of their
	// own; zero means none.
	RateLimit auth.Limit
	// AuthOptions are given to the auth middleware after the gateway's
	// own (logger, rate limit, and the error shape of each path's family,
	// [apierrors.ShapeFor]).
	AuthOptions []auth.Option
	// Logger receives the handlers' logs and, with AccessLog, one line per
	// request. Nil discards everything.
	Logger *slog.Logger
	// AccessLog logs one line per request at info level: method, path,
	// status, latency and the key id (never the secret), also for
	// requests that the auth middleware refuses with 401 (a disabled or
	// expired key), 403 or 429. It learns the key id through
	// auth.WithKeyObserver; an observer in AuthOptions replaces it.
	AccessLog bool

	// ReadyChecks are further dependencies that GET /readyz asks, by
	// name, beside the stores of this Config that implement [Pinger] and
	// the Relay (the Redis rate limiter of AuthOptions, say). Wrap one
	// that every replica shares with [Shared]. See [ReadyPath].
	ReadyChecks map[string]Pinger
	// ReadyTimeout bounds each readiness check; 0 means
	// DefaultReadyTimeout (2s).
	ReadyTimeout time.Duration
}

// Gateway is the assembled API: an http.Handler, and the video runner
// behind it. Create it with [New].
type Gateway struct {
	handler http.Handler
	mux     *http.ServeMux
	health  func(w http.ResponseWriter, r *http.Request) bool
	runner  *runner.Runner        // nil without Config.Videos
	bg      *responses.Background // nil without Config.Responses
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
	if c.PublicBaseURL != "" {
		if u, err := url.Parse(c.PublicBaseURL); err != nil || !u.IsAbs() || u.Host == "" {
			return nil, fmt.Errorf("gateway: New: PublicBaseURL %q is not an absolute URL", c.PublicBaseURL)
		}
	}
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	timeout := c.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	g := &Gateway{health: health(readyChecks(c), timeout, logger)}
	if c.Relay != nil {
		var err error
		if c, err = withRelay(c); err != nil {
			return nil, err
		}
	}

	mux := http.NewServeMux()
	g.mux = mux
	models.Register(mux, models.NewHandler(c.Catalog, models.WithLogger(logger), models.WithAllowed(keyAllows)))
	if c.Chat != nil {
		chat.Register(mux, chat.NewHandler(c.Catalog, c.Chat, endpoint.WithLogger(logger), endpoint.WithMaxRequestBytes(c.MaxRequestBytes),
			endpoint.WithInterceptors(c.Interceptors...)))
	}
	if c.Completions != nil {
		completions.Register(mux, completions.NewHandler(c.Catalog, c.Completions, endpoint.WithLogger(logger),
			endpoint.WithMaxRequestBytes(c.MaxRequestBytes), endpoint.WithInterceptors(c.Interceptors...)))
	}
	if c.Responses != nil {
		convs := c.ConversationStore
		if convs == nil {
			convs = conversations.NewMemoryStore(nil)
		}
		opts := []responses.Option{endpoint.WithLogger(logger), endpoint.WithMaxRequestBytes(c.MaxRequestBytes),
			endpoint.WithInterceptors(c.Interceptors...), responses.WithConversations(convs)}
		if c.ResponseStore != nil {
			opts = append(opts, responses.WithStore(c.ResponseStore))
		}
		runs := c.Runs
		if runs == nil {
			runs = responses.NewMemoryRunStore()
		}
		g.bg = responses.NewBackground(runs, append([]responses.BackgroundOption{responses.WithRunLogger(logger),
			responses.WithKeyStore(c.Keys)}, c.BackgroundOptions...)...)
		opts = append(opts, responses.WithBackground(g.bg))
		responses.Register(mux, responses.NewHandler(c.Catalog, c.Responses, opts...))
		conversations.Register(mux, conversations.NewHandler(convs, conversations.WithLogger(logger),
			conversations.WithMaxRequestBytes(c.MaxRequestBytes)))
	}
	if c.Videos != nil {
		tasks, contents := c.Tasks, c.Contents
		if tasks == nil {
			tasks = videos.NewMemoryStore(nil)
		}
		if contents == nil {
			contents = videos.NewMemoryContentStore(nil)
		}
		opts := append([]runner.Option{runner.WithLogger(logger), runner.WithKeyStore(c.Keys)}, c.RunnerOptions...)
		g.runner = runner.New(tasks, c.Videos, contents, opts...)
		vopts := []videos.Option{videos.WithNotify(g.runner.Wake), videos.WithLogger(logger),
			videos.WithMaxRequestBytes(c.MaxVideoRequestBytes), videos.WithInterceptors(c.Interceptors...)}
		if c.PublicBaseURL != "" {
			vopts = append(vopts, videos.WithPublicURL(c.PublicBaseURL))
		}
		if s, ok := c.Videos.(videos.Submitter); ok {
			// The relay's generator creates each task upstream before the
			// client is answered.
			vopts = append(vopts, videos.WithSubmitter(s))
		}
		videos.Register(mux, videos.NewHandler(tasks, c.Catalog, contents, vopts...))
	}
	// The access points of spec §4.4 that the gateway serves itself, by
	// pattern (relay.AccessPatterns).
	served := map[string]http.Handler{}
	mountServed(mux, c, logger, served)
	if c.Routes != nil {
		c.Routes(mux)
	}
	mountAccess(mux, c, served)
	mountUnrouted(mux, apierrors.Renderer{Logger: logger})

	authOpts := []auth.Option{auth.WithLogger(logger), auth.WithErrorShape(apierrors.ShapeFor)}
	if c.RateLimit.Requests > 0 {
		authOpts = append(authOpts, auth.WithDefaultRateLimit(c.RateLimit))
	}
	if c.AccessLog {
		authOpts = append(authOpts, auth.WithKeyObserver(observeKey))
	}
	if c.Authenticators != nil {
		authOpts = append(authOpts, auth.WithAuthenticators(c.Authenticators...))
	}
	authOpts = append(authOpts, c.AuthOptions...)
	if c.ContentSessions != nil && c.Videos != nil {
		authOpts = append(authOpts, auth.WithSessionAuthenticator(contentSessions{mux, c.ContentSessions}))
	}
	var h http.Handler = LimitBodies(BodyLimits{ReadTimeout: c.BodyReadTimeout, MaxBytesInFlight: c.MaxBodyBytesInFlight})(routed(mux))
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

// withRelay routes c's families through c.Relay: a router.Router whose
// one route lists the relay's models, with the relay's backends, and
// whose default route has c's own backends, for every other model. A nil
// backend of c is never asked: the catalogue lists only routed models
// then, and a model that is in the catalogue but in neither route is
// answered 404 model_not_found, as the relay answers a model it does not
// route. (The routes list the relay's models by id only: c.Catalog is
// the gateway's catalogue.)
func withRelay(c Config) (Config, error) {
	r := c.Relay
	var relayed []models.Model
	for _, id := range r.Models() {
		relayed = append(relayed, models.Model{ID: id})
	}
	rt, err := router.New(
		router.Route{Models: relayed, Chat: r.Chat(), Completions: r.Completions(), Responses: r.Responses(), Videos: r.Videos()},
		router.Route{Chat: c.Chat, Completions: c.Completions, Responses: c.Responses, Videos: c.Videos},
	)
	if err != nil {
		return c, fmt.Errorf("gateway: New: %w", err)
	}
	c.Chat, c.Completions, c.Responses, c.Videos = rt.Chat(), rt.Completions(), rt.Responses(), rt.Videos()
	return c, nil
}

// mountAccess mounts the access points of spec §4.4: served holds the
// handlers of those the gateway serves itself, by pattern. Without a
// relay, they are mounted as they are. With one, the relay's access
// handler takes every access point: it passes a request through to the
// upstreams of its model when they speak the access point's format, and
// hands any other to the served handler (relay.WithFallback).
func mountAccess(mux *http.ServeMux, c Config, served map[string]http.Handler) {
	if c.Relay == nil {
		for p, h := range served {
			if !registered(mux, p) { // Config.Routes mounted its own
				mux.Handle(p, h)
			}
		}
		return
	}
	var opts []relay.AccessOption
	for p, h := range served {
		opts = append(opts, relay.WithFallback(p, h))
	}
	relay.RegisterAccess(mux, relay.NewAccessHandler(c.Relay, c.Catalog, opts...))
}

// registered reports whether mux already has a route of pattern
// ("POST /v1beta/models/{action...}"): a request of its method to its
// path, each wildcard a plain segment, is routed to it.
func registered(mux *http.ServeMux, pattern string) bool {
	method, path, _ := strings.Cut(pattern, " ")
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") {
			segs[i] = "x"
		}
	}
	probe := &http.Request{Method: method, URL: &url.URL{Path: strings.Join(segs, "/")}, Header: http.Header{}}
	_, got := mux.Handler(probe)
	return got == pattern
}

// ServeHTTP serves the API, and [HealthPath] and [ReadyPath] without
// credentials. It fills the Route of the request's telemetry.Info, if its
// context carries one (see package telemetry).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.health(w, r) {
		return
	}
	g.handler.ServeHTTP(w, r)
	routeOf(g.mux, r)
}

// Run runs the video runner and the runner of background responses
// until ctx is done or [Gateway.Shutdown] is called (see
// [runner.Runner.Run] and [responses.Background.Run]). Without a video
// generator nor a responses backend it returns nil at once. Call it
// once, in its own goroutine.
func (g *Gateway) Run(ctx context.Context) error {
	var (
		wg    sync.WaitGroup
		bgErr error
	)
	if g.bg != nil {
		wg.Go(func() { bgErr = g.bg.Run(ctx) })
	}
	var err error
	if g.runner != nil {
		err = g.runner.Run(ctx)
	}
	wg.Wait()
	return errors.Join(err, bgErr)
}

// Shutdown stops the video runner and the runner of background responses
// from taking new work and waits, until ctx is done, for the running
// work to finish. Shut the http.Server down first, so that no new work
// arrives.
func (g *Gateway) Shutdown(ctx context.Context) error {
	var errs []error
	if g.bg != nil {
		errs = append(errs, g.bg.Shutdown(ctx))
	}
	if g.runner != nil {
		errs = append(errs, g.runner.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// keyAllows lists only the models that the request's key may use, as the
// generation handlers allow only those.
func keyAllows(ctx context.Context, id string) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return !ok || p.AllowsModel(id)
}

// routeMethods are the methods that unrouted tries when it lists the
// methods a path allows.
var routeMethods = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// mountUnrouted mounts unrouted as mux's catch-all, unless Config.Routes
// mounted one of its own (which then answers what no route serves).
func mountUnrouted(mux *http.ServeMux, rd apierrors.Renderer) {
	probe := &http.Request{Method: "X-ANY-METHOD", URL: &url.URL{Path: "/"}}
	if _, pattern := mux.Handler(probe); pattern == "" {
		mux.Handle("/", unrouted(mux, rd))
	}
}

// unrouted is the mux's catch-all: it answers what no route serves in
// the JSON error shape of the path's family ([apierrors.ShapeFor]),
// instead of ServeMux's text/plain: 405 method_not_allowed, with an Allow
// header, for a path that other methods serve, and 404 not_found for any
// other. It runs only for requests that no route matched.
func unrouted(mux *http.ServeMux, rd apierrors.Renderer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allow []string
		for _, m := range routeMethods {
			probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
		noroute.Write(w, r, rd, allow)
	})
}

// contentSessions asks its SessionAuthenticator about the requests that
// mux routes to the video content route, and about no other: elsewhere
// it reports no session.
type contentSessions struct {
	mux      *http.ServeMux
	sessions auth.SessionAuthenticator
}

func (c contentSessions) AuthenticateSession(r *http.Request) (*auth.Principal, error) {
	if _, pattern := c.mux.Handler(r); pattern != videos.PatternContent {
		return nil, nil
	}
	return c.sessions.AuthenticateSession(r)
}
