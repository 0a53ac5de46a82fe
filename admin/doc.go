// Package admin serves the gateway's admin API: API keys created, listed,
// changed and revoked without a restart, and their usage (requests,
// tokens and cost in US dollars) read back by day, model or key.
//
//	keys := auth.NewCachedKeyStore(db.Keys(), auth.DefaultKeyCacheTTL) // what the middleware uses too
//	adminMux := http.NewServeMux()
//	admin.Register(adminMux, admin.NewHandler(keys, admin.WithAdminKey(os.Getenv("GATEWAY_ADMIN_KEY"))))
//	go http.ListenAndServe("127.0.0.1:8090", adminMux)
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// Serve it on a listener of its own, reachable by operators only (the
// example server's -admin-addr, 127.0.0.1:8090 by default). Every request
// carries the admin key as "Authorization: Bearer <admin key>"; it is
// compared in constant time and never logged. Errors use the general
// envelope {"error":{"message","type","code","param"}}: 401
// missing_authorization or invalid_api_key, 400 invalid_request_error
// naming the offending field in param, 404 not_found, 405
// method_not_allowed, and 503 service_unavailable with Retry-After when
// the key store cannot be reached (its error is logged, not sent).
//
// # Keys
//
// POST /admin/v1/keys takes {owner, quota, rate_limit, allowed_models,
// expires_at, budget_usd}, every field optional:
//
//   - quota: the key's budget in tokens (a whole number ≥ 0); null or
//     absent means unlimited;
//   - rate_limit: "5/s", "600/m", "10/h", "100/10s" or "unlimited" (see
//     [auth.ParseLimit]); null or absent means the gateway's default;
//   - allowed_models: the model ids the key may use; empty or null means
//     all (checked against the catalogue with [WithCatalog]);
//   - expires_at: an RFC 3339 time; null or absent means never;
//   - budget_usd: a budget in US dollars (> 0); null or absent means
//     none. Once the cost recorded against the key reaches it, the key
//     is refused with 403 insufficient_quota.
//
// It answers 201 with the key object and, this once, its "secret": "sk-"
// followed by 256 random bits. The store keeps only its SHA-256.
//
// A key object is
//
//	{"object":"api_key","id":"key_…","owner":"acme","quota":100000,"used":1234,
//	 "remaining":98766,"rate_limit":"5/s","allowed_models":[],"expires_at":null,
//	 "budget_usd":10,"cost_usd":0.0123,"disabled":false,"created_at":1795000000}
//
// where quota is the budget in tokens that the key was given, as created
// or last changed (auth.Key.Granted; null: unlimited); used is the tokens
// recorded, remaining what is left of the quota (null: unlimited): quota
// less used, never below 0 — a key that used more than its quota (the
// request that crosses it is served in full; a quota can be lowered below
// the usage) has 0 left and keeps its quota. rate_limit is null for the
// gateway's default, and created_at Unix seconds. The object never
// carries the secret or its hash. A key store that does not keep
// auth.Key.Granted reports quota as remaining plus used
// (auth.Key.GrantedQuota), which is the quota until the key overspends it.
//
// Keys that an embedder stores without a secret, for its own users
// (auth.Identities names them by id), are listed, read, changed, deleted
// and their usage read like the others; this API creates keys with a
// secret only. Deleting such a key refuses its user with 401
// invalid_api_key at once, as deleting an API key does.
//
// GET /admin/v1/keys?limit=20&after=<id> lists keys in order of id,
// {"object":"list","data":[…],"has_more":true,"last_id":"key_…"}: pass
// last_id as after for the next page (limit 1 to 100, default 20).
// GET /admin/v1/keys/{id} returns one key. PATCH /admin/v1/keys/{id}
// takes any of owner, quota, rate_limit, allowed_models, expires_at,
// budget_usd and disabled, sets those given (null restoring the default
// above), keeps the usage (a quota lower than what was used leaves
// nothing remaining), and returns the key. DELETE /admin/v1/keys/{id} revokes
// the key, {"id":"key_…","object":"api_key","deleted":true}: its secret
// gets 401 invalid_api_key at once from the process whose store the
// handler was given, and from other processes within their key cache's
// TTL ([auth.DefaultKeyCacheTTL], 5 seconds). Its usage rows stay.
//
// # Usage
//
// GET /admin/v1/usage?key_id=&model=&from=&to=&group_by=day|model|key
// sums the usage rows that the key store records ([auth.UsageReader]: one
// per request, with its model, tokens and cost at the model's
// models.Pricing), filtered by key and model, from from (inclusive) to
// to (exclusive), grouped by UTC day (the default), model or key:
//
//	{"object":"list","group_by":"day","data":[
//	  {"day":"2026-11-26","requests":3,"input_tokens":30,"output_tokens":90,"cost_usd":0.0012}]}
//
// Each row carries "day", "model" or "key_id" according to group_by, and
// rows are sorted by that field. The parts of the tokens that providers
// price apart, and the model's pricing may (models.Pricing), are added
// when not 0: "cached_tokens" and "cache_write_tokens" (of the input
// tokens, read from and written to the provider's prompt cache) and
// "reasoning_tokens" (of the output tokens):
//
//	{"model":"gpt-5","requests":2,"input_tokens":1200,"output_tokens":300,
//	  "cached_tokens":1024,"reasoning_tokens":192,"cost_usd":0.0042} from and to are RFC 3339 times or UTC
//
// days (YYYY-MM-DD); a day as to includes that whole day. With a store
// that records no usage, the route answers 404.
//
// # Admin-console sessions
//
// The spec lets the video content route take an admin-console session in
// place of an API key (§4.7, §5.3). [Sessions] are those sessions: with
// [WithSessions], POST /admin/v1/sessions takes {"owner":"acme"} and
// answers 201
//
//	{"object":"session","owner":"acme","cookie":"gatewaykit_session",
//	 "token":"v1.…","expires_at":1795003600}
//
// a session of the account acme (the Owner of API keys), valid for the
// Sessions' TTL ([DefaultSessionTTL], an hour). A client sends it in the
// cookie [SessionCookie]; the gateway asks the same Sessions, an
// auth.SessionAuthenticator, on the content route only
// (gateway.Config.ContentSessions), and the session downloads what the
// account's keys may, nothing else. Sessions are signed under the admin
// key, kept nowhere, and revoked all at once by changing it. An owner is
// 1 to 256 bytes of printable UTF-8 (400 with param "owner" otherwise).
// A browser page that sets the cookie should give it Path=/v1/videos/
// and SameSite=Strict, so that no other site's page makes the browser
// send it.
//
// # CORS
//
// The handler answers CORS preflight requests (OPTIONS, without the
// admin key) and sets Access-Control-Allow-Origin: * on every reply,
// allowing the Authorization and Content-Type headers, so that a browser
// console served from another origin (the gateway's main listener) can
// call it. That is safe because the API is authenticated by a bearer key
// that a page must hold and send explicitly, never by a cookie that a
// browser would attach on its own: a page from another site without the
// admin key gets 401 like anyone else.
package admin
