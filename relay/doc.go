// Package relay forwards the gateway's requests to upstream
// OpenAI-compatible services over HTTP: backends for the chat,
// completions, responses and videos handlers, and pass-through handlers
// for the other access points of spec §4.4. Package relaytest beside it
// is a fake upstream for tests.
//
// # Routes and failover
//
// A [Relay] is made from [Route] values: each public model id names one
// or more [Upstream] services (base URL, the upstream's key, the
// upstream's name for the model), in failover order.
//
//	r, err := relay.New([]relay.Route{{
//		Model: "gpt-4o",
//		Upstreams: []relay.Upstream{
//			{BaseURL: "https://api.openai.com/v1", Key: os.Getenv("OPENAI_API_KEY")},
//			{BaseURL: "http://10.0.0.7:8000/v1", Model: "local-4o"},
//		},
//	}})
//
// Every upstream call goes through [Relay.Do]: it sends the request to
// the first upstream, and to the next when one cannot be reached, does not
// answer within the first-byte timeout, or answers 5xx, 401 or 403 (a
// refusal of the gateway's key for that upstream); never after anything
// went to the client (see Do for when a retry is safe). An
// upstream that failed so cools down ([WithCooldown]: 1s, doubling with
// each failure in a row up to 30s, ended by a success): meanwhile the
// route's other upstreams are tried first, and when all of them cool, the
// one whose cool-down ends first is tried first rather than the request
// failing. Upstream replies that are errors become the client's errors
// with [UpstreamError]: a 4xx keeps its status and message, a 429 its
// Retry-After, a 401 or 403 (the upstream refused the gateway's own key)
// is 502 bad_gateway, and everything else (5xx, a connection failure, a
// reply that cannot be read) is 502 bad_gateway; timeouts are 504
// gateway_timeout.
//
// # Backends
//
// [Relay.Chat], [Relay.Completions] and [Relay.Responses] plug into the
// handlers of packages chat, completions and responses; [Relay.Videos]
// is the videos.Generator of a runner.Runner, and the videos.Submitter of
// the video handler:
//
//	chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
//	completions.Register(mux, completions.NewHandler(catalog, r.Completions()))
//	responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
//	gen := r.Videos()
//	rn := runner.New(store, gen, contents, runner.WithKeyStore(keys), runner.WithWorkers(64))
//	go rn.Run(ctx) // until ctx is done; rn.Shutdown(ctx) at exit
//	videos.Register(mux, videos.NewHandler(store, catalog, contents,
//		videos.WithNotify(rn.Wake), videos.WithSubmitter(gen.(videos.Submitter))))
//	server := auth.Middleware(keys)(relay.ForwardHeaders(mux))
//
// The runner polls the upstream tasks and downloads their videos, and
// settles each task's charge against keys when it ends (without
// runner.WithKeyStore the charge stays reserved); see [Relay.Videos]
// and its example.
//
// The handlers own the wire: replies carry the gateway's ids, timestamps
// and public model names, whatever the upstream sent. The backends
// forward what the client sent, every field included (the request body
// byte for byte, as the Params give it, chat.Params.Body and the like,
// with only "model" and, when streaming, stream_options rewritten; the
// responses backend also replaces the input with the conversation), and
// hand back what the upstream produced: the responses backend relays
// output messages, function calls and reasoning items (their summaries;
// see [Relay.Responses]).
//
// Streams are read event by event with package sse and passed on as they
// arrive; nothing is buffered. The handlers run a stream in the
// request's goroutine, and the relay's streams call the Flush of their
// Params (chat.Params.Flush, …) before each read of the upstream's reply:
// the events of one read reach the client in one write, and none waits
// for the next read. A chat chunk of the usual shape (one choice, no tool
// calls) is attached to its delta (chat.Delta.SetChunk) and passed
// through as the upstream wrote it, with only id, object, created and
// model replaced by the gateway's and "usage": null dropped, so that the
// members the gateway does not model (system_fingerprint, logprobs,
// obfuscation, a provider's own) reach the client; other chunks are
// decoded and encoded again by the handler. A non-streaming chat reply
// without tool calls is passed through the same way
// (chat.Result.SetReply), with the gateway's usage in place of the
// upstream's (the same counts, and the same prompt_tokens_details and
// completion_tokens_details: cached, audio, reasoning and prediction
// tokens; members of them that package chat does not model are
// dropped). The usage chunk of a stream keeps them alike, and the usage
// of an upstream of another format is translated with its cache and
// reasoning counts (see [Relay.Chat]). Completions and their chunks are passed through alike,
// logprobs included; their chunks carry no model, as the legacy format
// has it. The capabilities travel with the data, so a backend that wraps
// the relay's (a router, a logging wrapper) keeps them as long as it
// passes the Params and the deltas along. The upstream is always asked for its usage
// (stream_options.include_usage), and the handler shows the client the
// usage chunk only if the client asked for it. The usage charged to the
// API key is the upstream's; until it arrives (and if it never does),
// each increment reports a running estimate — the prompt's text and the
// streamed fragments, at about four characters a token — so that a client
// that goes away in the middle of a stream is charged for what was
// generated.
//
// Each token count that an upstream reports, in any format, is taken from
// 0 to 2³¹−1 (endpoint.MaxOutputTokens), as the handlers take any
// backend's: a claim of 2⁶³−1 tokens or of a negative count shows the
// client, and charges the key, the count so taken, and is logged at warn
// level with the model and the upstream's name (never a key). The access
// points pass the upstream's reply through as it is, and charge its usage
// taken the same way.
//
// # Upstreams of other formats
//
// An [Upstream] whose API is [APIGemini] speaks Google's Gemini format:
// [Relay.Chat] translates each chat completions request for it into
// POST {root}/v1beta/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse when streaming (the root as for
// [NewAccessHandler]: a BaseURL ending in /v1beta is used as it is, one
// ending in /v1 has "beta" appended), with the upstream's key as
// x-goog-api-key and no Authorization header; the reply, the stream (one
// data: line per event, no [DONE]: the stream must end after every
// candidate's finishReason), the usage (thoughts count as reasoning
// tokens) and the errors (Google's error object: its status names the
// code, a 429 RESOURCE_EXHAUSTED keeps its RetryInfo delay as
// Retry-After, a 400 API_KEY_INVALID is the gateway's key refused, a 502)
// come back as chat results and deltas. [Relay.Responses] serves such a
// model through the same translation (the responses request as the chat
// request it amounts to, package responses/fromchat); compaction is not
// translated. A route may mix
// upstreams of both formats: [Relay.Do] hands each its request in its own
// format, and the reply is read in the format of the one that answered.
// Package gemini's wire types are shared.
//
// An [Upstream] whose API is [APIAnthropic] (configuration key "api":
// "anthropic") speaks the messages format. The chat backend sends such an
// upstream POST {BaseURL}/messages (the key as x-api-key,
// anthropic-version [DefaultAnthropicVersion]) with the chat request
// translated, and translates the reply, the stream's events, the usage
// and the errors back, so that a chat client reaches the model as if it
// spoke chat completions (see [Relay.Chat]). The choice is per upstream:
// a route may fail over between upstreams of different APIs.
// [Relay.Responses] serves such a model through the same translation,
// the responses request made a chat request by package
// responses/fromchat.
// The completions and video backends do not translate: they send the
// OpenAI-format request to every upstream.
//
// # Access points
//
// [NewAccessHandler] serves the other access points of spec §4.4
// (embeddings, images, audio, moderations, rerank, the messages format and
// the Gemini-style generateContent), passing requests and replies through
// to the model's upstreams with [Relay.Do]; its documentation gives the
// credentials, model lookup and error shapes of each format.
// [RegisterAccess] mounts it on a ServeMux; on any other router, mount the
// routes of [AccessRoutes] (see package route).
//
// # Errors
//
// Before anything was sent to the client, an error is the client's JSON
// error with a real status: an upstream 4xx keeps its status and
// message, an upstream 429 its Retry-After, and a 5xx, a connection
// failure or a reply that is not what the API says (malformed JSON,
// malformed SSE, a stream that ends without [DONE], chunks that break the
// API's rules, a responses reply that is not a response object) is 502
// bad_gateway; timeouts are 504 gateway_timeout. An upstream 401 or 403
// is a 502 bad_gateway too, whose message says that the upstream refused
// the gateway's credentials: the client's key was accepted, and must not
// look refused (invalid_api_key) to it; it carries X-Should-Retry: false,
// so that the official SDKs do not retry it. After the first event, the same
// errors end the client's stream with the handler's streamed error (an
// error event, or response.failed). The text of upstream 401, 403 and
// 5xx replies and of error events goes to the log only.
//
// Nothing of the upstream's credentials leaks: every upstream text, the
// 4xx messages passed to clients, the error events of the access points'
// streams and the replies quoted in the log alike, goes through [Redact],
// which replaces the upstream's configured key wherever it occurs, bearer
// tokens, the values of key headers, parameters and members (x-api-key,
// x-goog-api-key, key=, api_key, Authorization…) and sk-…-shaped tokens
// with "[redacted]".
//
// # Credentials and headers
//
// The upstream's key, never the client's, is sent as Authorization:
// Bearer. The client headers that matter upstream (OpenAI-Organization,
// OpenAI-Project, Idempotency-Key, X-Request-Id, …) are forwarded when the
// handlers are wrapped in [ForwardHeaders].
//
// # Timeouts and cancellation
//
// [Timeouts] bounds connecting, the wait for the reply's headers (first
// byte), and each wait for more of a reply body (idle, between stream
// events). Every upstream request carries the client request's context:
// a client that goes away closes the upstream request at once, before
// its first byte as well as in the middle of a stream.
//
// # Memory
//
// Streams are passed on event by event (each event at most 32 MiB, see
// package sse), and the access points ([NewAccessHandler]) copy replies
// to the client as they arrive. The replies that the relay reads whole
// before answering — non-streamed chat, completions and responses replies,
// translated from another format or not, and the video backend's task
// replies — are at most 32 MiB each, and bounded together: the replies
// being read at once, across all requests, hold at most
// [DefaultMaxReplyBytesInFlight] (64 MiB; [WithMaxReplyBytesInFlight]
// sets another bound). A reply that does not fit beside the others is a
// 503 service_unavailable with Retry-After: 1, one larger than the bound
// a 502 bad_gateway; the rest of it is not read.
//
// # Videos
//
// [Relay.Videos] is a videos.Generator and a videos.Submitter: mounted
// with videos.WithSubmitter (package gateway does it), the create
// handlers create each task upstream (POST {base}/videos, or
// {base}/vendorai/videos for the multimodal path, with the gateway's
// task id as its Idempotency-Key) before they answer the client. A
// request that the upstream refuses is refused to the client at once,
// with the upstream's 4xx message and code in the flat shape of the
// create paths, and no task is stored; an upstream 5xx or an unreachable
// upstream is a 502. The upstream's task id (and the upstream that holds
// it) is stored with the gateway's task as its BackendRef, so the runner
// that claims it, after a restart or on another replica, polls that
// upstream task and never creates it twice. Polls come within a second
// of the creation, then every [WithPollInterval] or sooner when the
// upstream's openai-poll-after-ms says so, and report the upstream's
// progress as it rises. Finished content that the upstream serves as
// bytes is downloaded into the gateway's content store, typed as a video
// or image type that a browser does not run (video/mp4, video/webm,
// video/quicktime, image/png, image/jpeg, image/webp, image/gif) or else
// as application/octet-stream; the gateway's content endpoint serves all
// but the five a browser plays (video/mp4, video/webm, image/png,
// image/jpeg, image/webp) for download only, with nosniff and a sandbox
// policy: an upstream's page or SVG image never runs on the gateway's
// origin. Content that it redirects to (object storage) is not copied:
// its URL becomes the task's, and the gateway's content endpoint
// redirects there, or streams it with videos.WithContentProxy (needed by
// the official Go SDK, which refuses cross-origin redirects); only an
// https location is taken (http too from an upstream configured at an
// http base URL), any other (javascript:, data:…) fails the task with
// bad_gateway.
//
// On the video path an upstream 401 or 403 means that the upstream
// refused the gateway's own key, not the client's: it is a 502
// bad_gateway whose message says so, and the upstream's reply goes to the
// log only. The gateway's task ids stay its own: upstream task ids,
// URLs, IP addresses, internal host names and credentials are taken out
// of every video error a client sees (a failed task's error, a refused
// creation). See [Relay.Videos].
//
// # Transport
//
// All calls of a Relay share one tuned [http.Transport] ([NewTransport]
// documents its pool sizing, timeouts and HTTP/2 choice), unless
// [WithTransport] sets another. To trace upstream calls, wrap
// NewTransport's in a tracing round tripper and give it back with
// WithTransport (module github.com/gatewaykit/gatewaykit/observe's
// tracing.Transport does).
//
// # Observing upstreams
//
// [WithAttemptObserver] sets a function that [Relay.Do] calls after each
// attempt at an upstream (its model, upstream name, status, error,
// whether it fails over), for metrics. [Relay.Ping] reports whether any
// upstream answers, for a readiness check: passive while requests get
// replies, a probe of each upstream's model list after
// [DefaultReadyWindow] without one.
package relay
