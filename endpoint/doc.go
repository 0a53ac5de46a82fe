// Package endpoint holds what the endpoint packages chat, completions and
// responses share: the wire types that more than one of them sends or
// reads ([Usage], [FinishReason], [Stop], [StreamOptions]) and the checks
// that go with them ([ValidImageURL]); and the one option type of their
// handlers, [Option], with the options that mean the same in all three.
//
//	chat.Register(mux, chat.NewHandler(catalog, backend,
//		endpoint.WithLogger(logger), endpoint.WithMaxRequestBytes(1<<20)))
//	responses.Register(mux, responses.NewHandler(catalog, backend,
//		endpoint.WithLogger(logger), responses.WithStore(store)))
//
// Every endpoint package mounts the same way: NewHandler returns an
// http.Handler, and the package's Register(mux, h) registers it on a
// ServeMux under the package's pattern or patterns (Pattern, Patterns),
// which are exported for routers of other kinds. A handler of several
// routes routes them with a ServeMux of its own, and every handler reads
// its path's wildcards with r.PathValue; none parses the path. Under a
// prefix, mount a handler through http.StripPrefix.
//
// Every handler takes a request the same way: decode (at most
// [WithMaxRequestBytes]), validate ([WithValidator]), check the model
// against the catalogue and the caller's key ([WithAllowed]), reserve the
// request's estimate from the key's quota, ask the backend, answer with
// JSON or an SSE stream ([WithKeepAlive]; the handler flushes a streamed
// event unless the backend's next delta is already at hand), and settle
// the reservation to the usage. Errors go through one renderer and the
// hook of [WithErrorHook].
//
// Package chat names the wire types too ([chat.Usage] is [Usage], and so
// on), so that code written against chat alone needs them from there.
package endpoint
