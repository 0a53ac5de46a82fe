// Package gateway assembles the whole gateway API on one [http.Handler]:
// the model list, chat completions, legacy completions, responses, video
// tasks, and
// any extra routes, behind the auth middleware, with a one-line request
// log. It is the wiring of the example server, importable: use it when
// you want the entire API in one call, and the endpoint packages
// directly when you want to choose routes, middleware and options one by
// one.
//
//	keys := auth.NewMemoryKeyStore()
//	_ = keys.Add(ctx, secret, auth.Key{ID: "team-a", Quota: auth.UnlimitedQuota()})
//	text := demo.NewTextBackend()
//	g, err := gateway.New(gateway.Config{
//		Keys:        keys,
//		Catalog:     models.NewMemoryCatalog(demo.TextModels()...),
//		Chat:        text.Chat(),
//		Completions: text.Completions(),
//	})
//	go g.Run(ctx)       // the video runner and the background responses' runner
//	l, err := net.Listen("tcp", addr)
//	srv := gateway.NewServer(addr, g)
//	go srv.Serve(gateway.LimitListener(l, gateway.DefaultMaxConns))
//	…
//	srv.Shutdown(shutdownCtx)
//	g.Shutdown(shutdownCtx)
//
// # What is mounted
//
// The model list (GET /v1/models, /v1/models/{id}, /v1beta/models…) is
// always mounted and lists only the models that the caller's key may use.
// Each generation family is mounted when its backend is set: [Config].Chat,
// Completions, Responses, Videos, and the other access points of spec
// §4.4: the messages format (POST /v1/messages, package messages) and the
// Gemini-style generateContent and streamGenerateContent (package
// gemini), both translated over Chat, Embeddings (POST /v1/embeddings), Moderations (POST
// /v1/moderations), Rerank (POST /v1/rerank), Images (POST
// /v1/images/generations, and GET /v1/images/files/{name} for the files
// of its url replies, signed with ImageURLKey and built under
// PublicBaseURL) and Audio (POST /v1/audio/speech, /transcriptions,
// /translations). With a Relay, these access points are the relay's
// first: a request for a model it routes to OpenAI-compatible upstreams
// is passed through, and any other comes to the backend here
// (relay.WithFallback); a messages-format or Gemini-style request
// is passed through to a model whose upstreams all speak that format
// natively (relay.APIAnthropic, relay.APIGemini), and translated over the
// chat backend (the relay's, for a routed model) otherwise. Responses
// are not served over Chat unless asked: a backend of their own keeps
// what chat cannot carry, and they keep conversations in a store, so
// [Config].Responses set to fromchat.New(Chat) (package
// responses/fromchat) is the one line that serves them over the chat
// backend. With Responses come the conversations of /v1/conversations
// (package conversations), kept in [Config].ConversationStore and
// continued by POST /v1/responses; for a relayed model too, whose upstream
// is sent the conversation's items as input, as for previous_response_id.
// Routes added by [Config].Routes are mounted on the same mux,
// behind the same middleware; an access point that Routes mounts replaces
// the gateway's own.
//
// With a Relay, the chat, completions, responses and video families go
// through a router.Router (package router): the relay's models to the
// relay's backends, every other model to the Config's own. The router
// asks the backend it picks with the request's own Params and hands its
// deltas back as they are, so a relayed model keeps what travels with the
// data (the client's body upstream, the upstream's chunks and pace back);
// an embedder assembling the handlers itself builds the same router.
//
// # Authentication
//
// Every route is behind auth.Middleware over [Config].Keys, which
// authenticates API keys by default. [Config].Authenticators replaces
// that with a list of authenticators charged to Keys: an
// embedder's own sign-in, charged like a key (auth.Identities), before
// or instead of API keys (auth.APIKeys). A request so authenticated is
// charged, limited, recorded and refused exactly as a key is, its video
// tasks settled by the runner against the same Keys.
//
// # Admin-console sessions
//
// The video content route also takes an admin-console session in place of
// an API key when [Config].ContentSessions is set (spec §4.7, §5.3): a
// request with no API key is asked of it there, and on no other route,
// where a session counts for nothing (401 missing_authorization). The
// example server gives it admin.Sessions, minted by its admin API.
//
// # Health, metrics and traces
//
// [HealthPath] (GET /healthz, 200 while the process answers) and
// [ReadyPath] (GET /readyz) are served before authentication, without
// credentials ([Gateway.HealthRoutes] lists them for a router in front of
// the Gateway). Readiness asks, at once and each within
// [Config].ReadyTimeout, the stores of the Config that implement [Pinger],
// the Relay ([relay.Relay.Ping]: an upstream answered within 30s, else a
// probe) and [Config].ReadyChecks; it answers 503 service_unavailable in
// the general error shape, naming the dependencies that did not answer
// (their errors are logged, not sent). A store answers when it can be
// read and written: the SQLite and PostgreSQL stores fail Ping after a
// write failed (a full disk, a read-only database) until a write
// succeeds. A dependency that every replica shares ([SharedPinger]: the
// PostgreSQL stores, a ReadyChecks entry wrapped with [Shared], such as
// Redis) is only named in the 200's "unavailable" list when it does not
// answer: its outage fails the requests that need it (503), and does not
// take every replica out of the load balancer at once.
//
// For metrics and traces, a middleware around the Gateway puts a
// telemetry.Info in the request's context (see package telemetry; the
// nested module github.com/gatewaykit/gatewaykit/observe has one for
// Prometheus and one for OpenTelemetry): the Gateway fills its Route
// (the pattern that served the request, also for a request that
// authentication refused), and the handlers its model, its tokens and
// its refusals, as they do mounted without a Gateway. [Config].Keys is
// used as it is.
//
// A store of the Config that cannot be reached (Keys, ResponseStore,
// ConversationStore, Tasks, Contents) is an outage, not a bug: every route that needs it
// answers 503 service_unavailable with Retry-After, in its family's error
// shape (apierrors.Unavailable), while readiness reports the store down.
// A rate limiter of AuthOptions that fails lets requests through without
// a rate limit, unless it is set to fail closed (auth.WithLimiterFailure).
// A key that has spent its quota is refused only on the routes that
// spend (auth.Spends): it still reads and deletes what its account owns.
//
// # Limits
//
// What one client can make the gateway hold, in memory and in time, is
// bounded. The defaults, and the [Config] field that changes each (zero
// means the default):
//
//	time to send a request body           60s       BodyReadTimeout (negative: none)
//	body bytes in flight, all requests    256 MiB   MaxBodyBytesInFlight (negative: none)
//	body of chat, completions, responses  8 MiB     MaxRequestBytes
//	body of a video create request        32 MiB    MaxVideoRequestBytes
//	body of the other JSON access points  8 MiB     (their packages' default)
//	transcription upload                  25 MiB    (audio.DefaultMaxRequestBytes)
//
// The first two are [LimitBodies], mounted behind the auth middleware (so
// only authenticated requests take room) and usable on its own by
// embedders who mount the endpoint packages themselves. A body that has
// not arrived within the read timeout fails with 408 request_timeout in
// the endpoint's error shape (a 400 on the video create paths, which
// answer every failure so), and its connection is closed; the deadline
// is set with http.ResponseController while the body is read and cleared
// at its end, so streamed replies are not cut, as http.Server.ReadTimeout
// would cut them. A request whose body does not fit in the room left is
// answered 503 service_unavailable with Retry-After: 1, in its family's
// shape ([ErrorShape]); the SDKs retry it.
//
// The video package bounds what a task keeps (64 KiB of unmodelled
// fields, 32 multipart fields) and its in-memory stores evict finished
// tasks and content (24 hours, 10 000 tasks, 1 GiB); the responses
// package's in-memory store evicts likewise (30 days, 10 000 responses,
// 256 MiB), and so does the conversations package's (10 000
// conversations, 256 MiB, least recently changed first). Pass stores
// made with other bounds as [Config].Tasks, Contents, ResponseStore and
// ConversationStore. The video url and thumbnail_url of a
// completed task are built under [Config].PublicBaseURL, or are paths
// relative to the client's origin: never from the request's Host header.
//
// # Limits per connection
//
// net/http's zero http.Server has no idle timeout and accepts 1 MiB of
// headers, so that idle keep-alive connections and slow, oversized
// headers hold file descriptors and memory for as long as clients like.
// [NewServer] returns a server with the limits that the example programs
// use, and [LimitListener] bounds the connections open at once:
//
//	ReadHeaderTimeout  10s    [DefaultReadHeaderTimeout]
//	IdleTimeout        2m     [DefaultIdleTimeout]
//	MaxHeaderBytes     64 KiB [DefaultMaxHeaderBytes] (431 beyond)
//	connections        1024   [DefaultMaxConns] (the longest idle gives way)
//
// Change a field of the returned server, or pass another n, to change
// one. When all n connections are open, the one idle longest (a
// keep-alive connection between requests) is closed for a new client, so
// that a flood of idle connections cannot keep /healthz or anyone else
// waiting; clients wait only while every connection carries a request
// or a stream. ReadTimeout and WriteTimeout stay unset: they bound a whole
// request or reply, and would cut event streams.
//
// # Configuration files
//
// [LoadFile] reads the JSON configuration that the example programs take
// with -config (see [File]): keys with every field of auth.Key (quota,
// rate_limit such as "5/s", allowed_models, expires_at, disabled), a
// default rate limit for keys without their own, models, and routes to
// upstreams. It refuses, naming the field, what would otherwise be
// silently wrong: unknown and duplicate members, negative quotas,
// malformed secrets, upstreams without a key or whose base_url does not
// end in /v1; JSON errors give the line and column. [DemoFile] is the
// built-in configuration of the examples: the keys sk-demo (unlimited
// quota, no rate limit), sk-demo-empty (zero quota) and sk-demo-limited
// (unlimited quota, 5 requests a minute), and the demo models.
package gateway
