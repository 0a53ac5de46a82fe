// Package telemetry holds the hook points through which metrics and
// traces watch the gateway, with no dependency beyond the standard
// library: an embedder's instrumentation (the nested module
// github.com/gatewaykit/gatewaykit/observe, or its own) implements them,
// and importing chat never brings a metrics or tracing library along.
//
// # Per-request information
//
// A middleware that wraps the gateway puts an [Info] in each request's
// context ([NewContext]); the kit fills it in as it learns about the
// request, and the middleware reads it once the request is served:
//
//	info := new(telemetry.Info)
//	next.ServeHTTP(w, r.WithContext(telemetry.NewContext(r.Context(), info)))
//	// info.Route, info.Model, info.InputTokens, … are known now
//
// Who fills what:
//
//   - Route: package gateway, with the ServeMux pattern that served the
//     request ("POST /v1/chat/completions"), also for a request that the
//     auth middleware refused before it was routed; "/" for a path that
//     no route serves; "GET /healthz" and "GET /readyz" for the health
//     routes.
//   - Model: the handlers of chat, completions and responses (and the
//     video create handler), once the model is found in the catalogue:
//     never a model name that a client made up, so that its values are
//     bounded by the catalogue.
//   - InputTokens and OutputTokens: package gateway, from the
//     auth.SettleParams of every settlement of the request's usage
//     against its key (the handlers settle once a reply ends, before
//     they return).
//   - KeyID: the auth middleware, once the credential named a known key.
//   - Refusal: the auth middleware and the endpoint handlers, with the
//     code of a refusal by the gateway's own limits (rate limit, quota).
//
// Without an Info in the context, nothing is recorded and nothing is
// allocated: the cost of the hooks is one context lookup per request.
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
