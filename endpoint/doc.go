// Package endpoint holds what the endpoint packages share: the wire types
// that more than one of chat, completions and responses sends or reads
// ([Usage], [FinishReason], [Stop], [StreamOptions]) and the checks that
// go with them ([ValidImageURL]); and the options that mean the same in
// the handlers of every endpoint package that takes them (chat,
// completions, responses, messages, gemini, embeddings, moderations,
// rerank, images and audio).
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
// request's estimate from the key's quota, run the interceptors
// ([WithInterceptors]), ask the backend, answer with
// JSON or an SSE stream ([WithKeepAlive]; the handler flushes a streamed
// event unless the backend's next delta is already at hand), and settle
// the reservation to the usage. Errors go through one renderer and the
// hook of [WithErrorHook]. Each handler fills the telemetry.Info of the
// request's context, if it carries one, on any router: its route, its
// model, its tokens and a refusal by the key's quota (see package
// telemetry).
//
// # Options
//
// The NewHandler of each endpoint package takes its own Option type
// (chat.Option, responses.Option, …): an interface whose one method,
// named for the package (ApplyToChat, ApplyToResponses, …), takes a type
// internal to this module, so that only this module's packages make
// options. An option of this package has the method of a package only
// where it means something to that package's handler, and its type says
// which packages take it:
//
//	type             returned by                 taken by
//	Option           WithLogger,                 every endpoint package
//	                 WithMaxRequestBytes,
//	                 WithAllowed, WithErrorHook,
//	                 WithInterceptors
//	ValidatorOption  WithValidator               all but messages and gemini
//	StreamOption     WithKeepAlive               chat, completions, responses,
//	                                             messages, gemini (they stream)
//	ClockOption      WithClock                   chat, completions, responses,
//	                                             images (replies carry a time)
//
// The options of a package's own (responses.WithStore and WithOwner,
// images.WithURLKey and WithPublicURL) are Options of that package only.
// Anywhere else an option does not compile: chat.NewHandler(catalog, b,
// responses.WithStore(s)) is a type error, as is
// embeddings.NewHandler(catalog, b, endpoint.WithKeepAlive(d)). A list of
// options has the Option type of the package that takes them:
//
//	opts := []chat.Option{endpoint.WithLogger(l), endpoint.WithKeepAlive(5 * time.Second)}
//	chat.Register(mux, chat.NewHandler(catalog, backend, opts...))
//
// # Streams
//
// A streaming backend (chat.StreamingBackend, and those of completions
// and responses) returns an iterator over the increments (deltas) of its
// reply, in order. The handler ranges over it in the request's
// goroutine, and writes the events of each delta before yield returns,
// so that an iterator may reuse what a delta points to once yield
// returns. When the client goes away, ctx is cancelled and the loop
// stops (yield returns false): the iterator must return as soon as yield
// returns false or ctx is done. To fail, an iterator yields a zero delta
// with the error and returns: before anything was sent, the client gets
// a JSON error with a real status; afterwards, the stream's own end for
// errors (an error event; in responses, response.failed). A panic of the
// iterator is a panic of the handler, which net/http recovers from as
// from any handler's.
//
// The backend's Params say when to send what it yielded (their Flush):
// Flush says that the stream is about to wait for its source (the next read of an upstream's reply, a pause
// of its own), and the handler sends the client what the stream has
// yielded so far, in one write. A stream that never calls Flush is
// flushed after every delta; once it has called Flush, the handler
// flushes only when it calls Flush and at the stream's end, so that what
// it yields between two waits leaves in one write and none of it waits
// for the next. A stream that has its whole reply at hand calls Flush
// once, first; a wrapper that waits on something of its own between the
// deltas it passes on calls Flush before it waits, as a backend does.
// Call Flush as yield is called: from the iterator's goroutine, before
// the iterator returns.
//
// # Interceptors
//
// [WithInterceptors] gives a handler a chain of [Interceptor] values, in
// connect's shape: an Interceptor wraps the next [Func] of the chain,
// which ends at the backend, and sees each admitted call as a [Call]
// (family, model, stream, principal, decoded request, prompt text through
// [Prompter]). It may refuse the call (return an error: rendered once, in
// the family's shape and status; the reservation released, no usage
// recorded), answer it itself ([NewReply]: sent as JSON or as a stream in
// the family's form, charged the usage it says), or call next and set
// hooks on the [Reply]: [Reply.EditText] rewrites each piece of text on
// its way out, [Reply.OnDone] sees the whole text and the usage once the
// reply has ended, and may change the usage charged. Only a chunk (or a
// JSON reply) whose text a hook changed is encoded anew: the members of an
// upstream's reply that the kit does not model reach the client through
// every hook that leaves the text alone. Without interceptors, a handler
// takes none of these steps. The examples are a guardrail, a reply cache
// and an audit log. videos.WithInterceptors runs the same interceptors
// at the creation of a video task, and gateway.Config.Interceptors gives
// them to every handler of package gateway.
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
