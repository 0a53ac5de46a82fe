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
// http.Handler, the package's Routes(h) lists its routes (method, path in
// ServeMux syntax, handler) for any router, and Register(mux, h)
// registers them on a ServeMux (package route). A handler of several
// routes routes them with a ServeMux of its own, and every handler finds
// its path's wildcards from the request's path, so that a router need
// fill no path value. Under a prefix, mount a handler through
// http.StripPrefix.
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
// # Request bodies
//
// Every JSON request body that the kit decodes (these families', and
// those of messages, gemini, embeddings, moderations, rerank, images,
// audio speech, videos and the admin API) must be one JSON object: null,
// like an array, is a 400 "request body must be a JSON object, got null".
// No object in it may name a member twice, at any depth, the members kept
// as sent (Extra, tool parameters, metadata) included: encoding/json
// would keep the last, another parser the first, and a gateway must not
// check one value and forward another. Names are compared as encoding/json
// matches them to the fields of the request types, case-insensitively
// ({"model":…,"MODEL":…} names model twice), and exactly elsewhere. The
// answer is a 400 invalid_request_error in the family's shape whose param
// is the member's path and whose message is the one of the relay's access
// points: "messages[0].role must appear once in the request body". (The
// relay's pass-through access points read only model, and forward the
// rest unread.)
//
// Package chat names the wire types too ([chat.Usage] is [Usage], and so
// on), so that code written against chat alone needs them from there.
package endpoint
