// Package auth authenticates gateway requests (spec §5) with API keys, or
// with any identity of the embedder's, charged like a key: it reads the
// credential, refuses bad keys, exhausted quotas (on the requests that
// spend) and excess request rates in the general error shape, and puts the
// caller's [Principal] in the request context for the handlers.
//
// Embedders implement a [KeyStore] (three methods: look a key up by its
// secret, reserve quota, settle it) or use [NewMemoryKeyStore], and
// mount the
// middleware in front of the gateway's handlers:
//
//	keys := auth.NewMemoryKeyStore()
//	secret, _ := auth.NewSecret()
//	_ = keys.Add(ctx, secret, auth.Key{ID: "key_1", Owner: "acme", Quota: auth.UnlimitedQuota()})
//	handler := auth.Middleware(keys, auth.WithDefaultRateLimit(auth.PerMinute(600)))(mux)
//
// Handlers read the caller with [PrincipalFrom], reserve quota for a
// request with [Reserve] and settle it when the request ends
// ([Reservation.Settle]), or record usage after the fact with [Charge],
// all in the store that the principal is charged to ([Principal].Keys).
// The conformance suites authtest.TestKeyStore and
// authtest.TestLimiter check any KeyStore and [Limiter].
//
// # Authenticators and identities
//
// The middleware asks its authenticators ([Authenticator]), in order, who makes a
// request: by default one, [APIKeys] of its KeyStore, which reads API
// keys. [WithAuthenticators] sets the list. An authenticator returns
// (nil, nil) when the request carries no credential of its kind (the
// next one is asked; 401 missing_authorization when none is left), a
// principal to authenticate it, or an error to refuse it (an
// *apierrors.Error as it is; an error wrapping [ErrKeyNotFound],
// [ErrKeyDisabled] or [ErrKeyExpired] as the 401 of such an API key; any
// other error as the outage of what it asks, 503). Whatever the
// authenticator, the middleware then does the same: it reports the
// principal's KeyID to [WithKeyObserver] and the telemetry, refuses a
// spending request of a principal charged to a store whose quota
// snapshot is spent (403), applies its rate limit (429), and puts it in
// the context, where [Reserve], [Charge] and [Settle] charge its store.
//
// An embedder's own users (signed in by a session cookie, a JWT, mTLS or
// an authenticating proxy) are charged like API keys with [Identities]:
// each user is a key of the store, usually stored without a secret
// ([KeyPutter.PutKey] or [MemoryKeyStore.Add] with an empty secret: only
// its id finds it), and the embedder's function names that key's id from
// the request; the key is looked up by id ([IDLookup]; a
// [CachedKeyStore] serves it from memory within its TTL, as it does
// Lookup). Everything an API key gets follows from the same key: quota
// reserved and settled, budgets in money, allowed models, its rate
// limit (under its id), expiry and the disabled flag, usage rows under
// its id (package admin reads them), owner scoping of what it stores
// ([AccountOwner]: by Key.Owner), telemetry, and the same refusals in the
// same shapes:
//
//	keys.PutKey(ctx, "", auth.Key{ID: "user_42", Owner: "user_42", Quota: auth.LimitedQuota(100_000)})
//	sessionUser := func(r *http.Request) (string, error) {
//		u, ok := mySessions.User(r) // the embedder's own sign-in
//		if !ok {
//			return "", nil // no session: the next authenticator is asked
//		}
//		return "user_" + u.ID, nil
//	}
//	mw := auth.Middleware(keys, auth.WithAuthenticators(auth.Identities(keys, sessionUser), auth.APIKeys(keys)))
//
// A principal may also be built by the embedder, in an Authenticator of
// its own or with [WithPrincipal] in front of the handlers: it is charged
// to its Keys, if set, and charged nothing otherwise.
//
// # Seams
//
// An embedder plugs into the kit at four points, each an exported type
// with a stated contract, and nothing found on a backend's type or in a
// context:
//
//   - Authenticator (package auth): who makes a request. auth.APIKeys
//     reads sk- keys, auth.Identities an embedder's own sign-in, charged
//     as a key is; any auth.Authenticator returns an auth.Principal.
//   - Interceptor (package endpoint): what happens to a call between its
//     admission and the backend, given to the handler with
//     endpoint.WithInterceptors: refuse it (its error in the family's
//     shape, charged nothing), answer it (endpoint.NewReply: JSON or
//     stream, charged its usage), or watch and rewrite its reply's text
//     and usage on the way out (Reply.EditText, Reply.OnDone). What an
//     upstream sent that the kit does not model reaches the client as
//     long as no hook changes the text that carries it.
//   - Router (package router): which backend serves a model; a
//     router.Router keeps the request body, the upstream's chunks and
//     the stream's pace of the backends it routes to.
//   - Route list (package route): where the handler is mounted; Routes
//     lists the method, path and handler of each route for any router,
//     Register mounts them on a ServeMux.
//
// # Credentials and precedence
//
// An API key is "sk-" followed by letters, digits, '-' and '_', at most
// 256 bytes long ([ValidSecret]); [NewSecret] mints one with 256 random
// bits. [APIKeys], the middleware's default authenticator, accepts it
// from four places (spec §5.1, §5.4),
// and uses the first one present, in this order, ignoring the others:
//
//  1. Authorization: Bearer <key> ([CredentialBearer])
//  2. x-api-key: <key> ([CredentialXAPIKey])
//  3. x-goog-api-key: <key> ([CredentialGoogAPIKey])
//  4. the query parameter key=<key> ([CredentialQueryKey])
//
// There is no fallback: an invalid Authorization header is refused even
// if a valid x-api-key follows. [Principal.Credential] records the source,
// which the model list uses to pick its reply format. [ParseCredential]
// is the pure parser.
//
// A middleware built with [WithSessionAuthenticator] also accepts an
// admin-console session ([CredentialSession]) when none of its
// authenticators finds a credential (its last authenticator); the spec allows this on the video content endpoint
// only (§4.7, §5.3), so mount such a middleware on that route alone, or
// give it an authenticator that answers on that route only, as
// gateway.Config.ContentSessions does (admin.Sessions mints sessions).
//
// # Errors
//
// Refusals are *apierrors.Error values rendered by apierrors.Renderer in
// the general shape {"error":{"message","type","param","code"}}:
//
//	401 missing_authorization  no credential (and no session, if accepted)
//	401 invalid_api_key        wrong scheme (not Bearer), malformed key,
//	                           the same source sent twice, unknown key,
//	                           expired key, disabled key; an identity
//	                           whose id names no key, or an expired or
//	                           disabled one (Identities)
//	403 insufficient_quota     a limited key with no quota left, or whose
//	                           cost reached its budget in money, on a
//	                           request that spends (see Quota)
//	429 rate_limit_exceeded    over the key's request rate
//	503 service_unavailable    the KeyStore (or an authenticator: a
//	                           session's, an identity's) failed, or the
//	                           Limiter did with FailClosed; sent with
//	                           Retry-After
//
// A dependency that fails is an outage, not a bug: the 503 tells clients,
// SDKs and load balancers to retry (apierrors.Unavailable). The
// handlers of the kit answer so too when the KeyStore fails them in
// [Reserve]. Only the request's own deadline is a 504 gateway_timeout,
// and a client that has gone is written nothing.
//
// Messages say what is wrong and how to send a key; they never contain the
// secret, and neither do the logs: [Credential] redacts itself, a
// KeyStore's error text is scrubbed of the secret before it is logged,
// and the middleware logs key ids only. A request carrying its key in the
// query string still exposes it to any access log that records URLs; the
// renderer logs the path only. An access log around the middleware learns
// the key id of every request, refused ones included, from
// [WithKeyObserver]. A 403 insufficient_quota or a 429 is also recorded
// as the request's refusal in the telemetry.Info of its context, if it
// carries one (package telemetry), for metrics.
//
// # Rate limits
//
// Each key may have its own [Limit] (Key.RateLimit); keys without one get
// the default of [WithDefaultRateLimit], which is none unless set. A Limit
// with Requests ≤ 0 means no limit, so a key can opt out of the default
// with &auth.Limit{}. Limits are token buckets: Requests at once, then one
// every Period/Requests. The [Limiter] is a [MemoryLimiter] per middleware
// unless [WithLimiter] sets a shared one. In configuration files and
// flags a Limit is text ([ParseLimit], [Limit.MarshalText]): "5/s",
// "600/m", "100/10s", or "unlimited".
//
// Every rate-limited response, allowed or refused, carries OpenAI's
// headers:
//
//	x-ratelimit-limit-requests      the limit's Requests
//	x-ratelimit-remaining-requests  requests still allowed now
//	x-ratelimit-reset-requests      time until the bucket is full, as
//	                                OpenAI writes it: "12ms", "1s", "6m0s"
//
// A 429 adds Retry-After (whole seconds, rounded up) and Retry-After-Ms,
// which the official SDKs prefer. Requests that are not rate-limited
// carry none of these headers.
//
// A Limiter that fails (a shared one whose Redis cannot be reached) fails
// open by default: the request is served without a rate limit and
// without these headers, and the failure is logged at most once every 10
// seconds, with the number of failures since, and reported to the
// function of [WithLimiterErrorObserver] (a metric) every time. An outage
// of the limiter so lifts rate limits for its duration instead of taking
// the gateway down; quota and budgets, which the KeyStore keeps, are
// still enforced. [WithLimiterFailure]([FailClosed]) refuses the requests
// instead, with 503 service_unavailable and Retry-After.
//
// # Quota
//
// A key's [Quota] is an integer budget, in tokens unless the embedder
// decides otherwise (every caller of Charge must use the same unit).
// Unlimited budgets are explicit ([UnlimitedQuota]); the zero Quota is an
// empty limited budget, so a forgotten quota fails closed.
//
// Quota is spent in two steps, so that concurrent requests cannot all
// spend the same budget:
//
//  1. Admission. On a request that spends, the middleware refuses a
//     limited key whose Remaining is ≤ 0 with 403 before doing any work
//     (a fast first refusal on the snapshot that Lookup returned). Then
//     the handler, once it knows
//     the request, reserves an estimate of its cost with [Reserve]
//     ([KeyStore.Reserve]). The estimate is granted in full as long as
//     any of the budget is unreserved (Remaining > Reserved); when all
//     of it is promised to requests in flight, Reserve fails with
//     [ErrQuotaExceeded] and the handler answers 403 insufficient_quota
//     without doing the work.
//  2. Settlement. When the reply ends (completed, failed or abandoned
//     by its client), the handler calls [Reservation.Settle] with the
//     real usage: [KeyStore.Settle] releases the reservation and
//     consumes the usage in one atomic step. Usage beyond what is left
//     takes what is left, leaves the budget at 0 and is reported with
//     [ErrQuotaExceeded] (and recorded in Quota.Used, never stored as a
//     negative budget).
//
// [Charge] consumes usage with nothing reserved, for work charged after
// the fact.
//
// # Which requests spend
//
// Quota refuses work that spends; reading what a key already owns stays
// open, so that a key whose quota ran out while a video was generating
// still sees the task completed and downloads what it paid for. The
// middleware checks the quota on the requests that [WithSpending] says
// spend, by default [Spends]: every method but GET, HEAD, OPTIONS and
// DELETE, and POST /v1/responses/{id}/cancel. For the kit's routes that is
//
//	spend (403 once the quota or    POST /v1/chat/completions, /v1/completions,
//	the budget in money is spent)   /v1/responses, /v1/responses/compact,
//	                                /v1/messages, /v1beta/models/{model}:generateContent
//	                                and :streamGenerateContent, /v1/embeddings,
//	                                /v1/moderations, /v1/rerank,
//	                                /v1/images/generations, /v1/audio/speech,
//	                                /v1/audio/transcriptions, /v1/audio/translations,
//	                                /v1/videos, /v1/vendorai/videos, /v1/vendor/videos
//	read (always open)              GET /v1/models, /v1/models/{id}, /v1beta/models…,
//	                                GET /v1/videos, /v1/videos/{id}, /v1/videos/{id}/content,
//	                                GET /v1/responses/{id}, /v1/responses/{id}/input_items,
//	                                GET /v1/images/files/{name},
//	                                DELETE /v1/videos/{id}, /v1/responses/{id},
//	                                POST /v1/responses/{id}/cancel
//
// and the spending handlers reserve their estimate through [Reserve],
// which the KeyStore refuses for a spent key too, however stale the
// middleware's snapshot (a video of a free model reserves nothing).
// A handler of an embedder's that only Charges after the fact is guarded
// by the middleware alone: mount it on a method that [Spends], or say so
// with WithSpending.
//
// # The bound
//
// Let B be a limited key's Remaining when requests start, and let every
// request reserve an estimate E_i before its work and settle its real
// usage U_i after. Admission needs Remaining > Reserved, that is
// (consumed + reserved) < B, and settling a request whose usage is
// within its estimate never raises consumed + reserved. So the usage
// consumed by all requests together, however many run at once, is
//
//	Σ U_i ≤ B − 1 + max E_i + Σ max(0, U_i − E_i)
//
// in the quota's unit: a budget is overrun by less than the largest
// single estimate, plus whatever requests used beyond their own
// estimates. The text endpoints (packages chat, completions, responses)
// estimate a request's tokens as its body's bytes / 4 plus its output
// cap (max_tokens, max_completion_tokens or max_output_tokens, else the
// model's output token limit, else 4096) for each choice; a backend that
// honours the cap stays within the estimate unless the prompt has more
// tokens than a quarter of the body's bytes (a stream whose backend
// reports no usage is charged that quarter, plus a quarter of the bytes
// of output it sent). The relay's access points and video tasks reserve
// too (see packages relay and videos). For example, 50 concurrent
// streamed chats without max_tokens on a key with 50 tokens left: the
// first reserves more than 50, the 49 others are refused with 403, and
// the key is charged what that one chat used.
//
// Huge caps and absurd usage cannot break the bound. An output cap above
// 2³¹−1 (endpoint.MaxOutputTokens) is refused with a 400 naming the
// field, so an estimate is at most the prompt's tokens plus 128 × (2³¹−1);
// every estimate, reservation, settlement, total and cost saturates
// (at math.MaxInt64, or math.MaxFloat64 for costs) rather than wrap, so a
// saturated reservation leaves the key all reserved, and refused, until
// it is settled. The handlers take each token count that a backend or an
// upstream reports from 0 to 2³¹−1 (a negative count as 0; the relay logs
// such a claim with the model and the upstream), so a request is never
// charged a negative amount, and [Reservation.Settle] releases its
// reservation whatever the settlement returns: an absurd usage neither
// makes a request free nor locks its key out.
//
// Reservations live in the [KeyStore] until settled. A process that dies
// with requests in flight leaves their reservations behind; a store
// shared by several processes should expire or reset them (for example
// at startup).
//
// # Usage and budgets in money
//
// The handlers settle each request once, when it ends (a stream, also
// one whose client left, a failed request included at no cost), with the
// model that answered, the input and output tokens and their cost in US
// dollars at the model's pricing ([SettleParams]). A store adds the cost
// to the key's [Quota].CostUSD, and a key with a budget in money
// (Quota.BudgetUSD) is refused with 403 insufficient_quota once its cost
// reaches it: by the middleware on the key's snapshot ([Quota.Exhausted])
// and by [KeyStore.Reserve]. The request that crosses the budget is
// served and recorded; concurrent requests may all cross it, as they may
// with Charge (a budget in money is checked, not reserved).
//
// A store that is a [UsageReader] records one usage row per settlement
// with a model, in the same atomic step as the quota, and reads them back
// summed by day, model or key; one that is a [KeyAdmin] lets keys be
// listed, read, changed and deleted (package admin serves both over HTTP);
// one that is an [IDLookup] finds keys by id for [Identities].
// [MemoryKeyStore] is all three, and [CachedKeyStore] passes them through,
// dropping a key changed or deleted through it from its cache at once.
// The conformance suites authtest.TestKeyAdmin, authtest.TestUsageReader
// and authtest.TestIDLookup check them.
//
// # Models
//
// Key.AllowedModels is carried to [Principal.AllowedModels]. The
// middleware does not read request bodies, so handlers enforce it with
// [Principal.AllowsModel].
package auth
