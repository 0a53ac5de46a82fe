// Package telemetry holds the hook points through which metrics and
// traces watch the gateway, with no dependency beyond the standard
// library: an embedder's instrumentation (the nested module
// github.com/gatewaykit/gatewaykit/observe, or its own) implements them,
// and importing chat never brings a metrics or tracing library along.
//
// # Per-request information
//
// A middleware that wraps the gateway, or the kit's handlers on a router
// of your own, puts an [Info] in each request's context ([NewContext]);
// the kit fills it in as it learns about the request, and the middleware
// reads it once the request is served:
//
//	info := new(telemetry.Info)
//	next.ServeHTTP(w, r.WithContext(telemetry.NewContext(r.Context(), info)))
//	// info.Route, info.Model, info.InputTokens, … are known now
//
// Who fills what, on any router (package gateway or another) unless
// said otherwise:
//
//   - Route: package gateway, with the ServeMux pattern that served the
//     request ("POST /v1/chat/completions"), also for a request that the
//     auth middleware refused before it was routed; "/" for a path that
//     no route serves; "GET /healthz" and "GET /readyz" for the health
//     routes. Mounted without package gateway, the handler that serves
//     the request fills it, when it is still empty, with the handler's
//     own pattern that the request matched (chat.Pattern, one of
//     responses.Patterns, a relay access point's pattern…), whatever the
//     router and the path it was mounted under: the handlers of packages
//     chat, completions, responses, messages, gemini, embeddings,
//     moderations, rerank, images, audio, models and videos, and the
//     relay's access points. There, a request that no handler of the kit
//     reached (refused by an auth middleware in front of it, or not
//     routed) has no Route, unless the embedder's middleware sets one.
//   - Model: every handler that checks a model against the catalogue
//     (models.Require: the handlers above but models, and the relay's
//     access points), once the model is found there: never a model name
//     that a client made up, so that its values are bounded by the
//     catalogue.
//   - InputTokens and OutputTokens: the same handlers, when they settle
//     the request's usage (once, when the reply ends, before they
//     return): the tokens of the usage they settle against the request's
//     key, or would settle for a request without one. Video tasks are
//     charged in seconds, not tokens, and add none. Only the handlers'
//     settlements count: a handler or a backend of your own that charges
//     tokens through package auth (auth.Charge, auth.Settle) adds them
//     with [AddTokens].
//   - CachedTokens, CacheWriteTokens and ReasoningTokens: the same
//     handlers, with InputTokens and OutputTokens ([AddTokenDetails]),
//     when the backend reported them.
//   - KeyID: the auth middleware, once the credential named a known key.
//   - Refusal: the auth middleware (a rate limit; a key with no quota
//     left) and the handlers above (a key whose quota is all reserved by
//     requests in flight), with the code of a refusal by the gateway's
//     own limits.
//
// Without an Info in the context, nothing is recorded and nothing is
// allocated: the cost of each hook is one context lookup (a handler
// calls a few per request).
//
// The fields are written on the request's goroutine, or by goroutines
// that end before the handler returns, so the middleware reads them
// without locking once next.ServeHTTP has returned, and must not read
// them before.
//
// # Process-level hooks
//
// A [UsageWriter] is a key store that writes the usage it settles behind,
// in group commits (the SQLite and PostgreSQL stores): a metrics package
// reads how far behind it is, at each scrape.
package telemetry
