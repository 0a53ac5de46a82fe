// Package router sends the requests of each model to the backends that
// serve it: an embedder's own backend for some models, the relay for
// others, the demo for the rest. A [Router] is made of [Route] values,
// each a list of models with a backend per endpoint family (chat,
// completions, responses, videos), and gives one backend per family, to
// mount as any other, and the catalogue of the routes' models, so that
// /v1/models lists what the router serves:
//
//	rt, err := router.New(
//		router.Route{Models: ownModels, Chat: own},
//		router.Route{Models: relayed, Chat: rl.Chat(), Completions: rl.Completions(), Responses: rl.Responses()},
//	)
//	…
//	models.Register(mux, models.NewHandler(rt.Catalog()))
//	chat.Register(mux, chat.NewHandler(rt.Catalog(), rt.Chat()))
//
// A route without models is the default route: it serves every model
// that no other route lists (package gateway routes the models of its
// relay and sends every other model to the default route of the
// Config's own backends). A model without a route, or whose route has no
// backend of the request's family, is answered 404 model_not_found.
//
// # What a router keeps
//
// A router asks the backend it picks with the very Params it is given
// and hands back its deltas and results unchanged, so that everything
// that travels with the data reaches the backend and the handler as it
// does without the router: the request body as the client sent it
// (chat.Params.Body), which the relay forwards; the upstream's chunks and
// replies (chat.Delta.SetChunk, chat.Result.SetReply), by which the
// members that the kit does not model (system_fingerprint, logprobs, …)
// reach the client; and the stream's pace (chat.Params.Flush), by which
// the events of one read of a relay's upstream leave in one write. Any
// backend that wraps another the same way (a logging or guardrail
// wrapper) keeps all of them too; nothing is found on a backend's type
// or in the context. A streaming request for a backend that does not
// stream is served by the family's Deltas (chat.Deltas and the like).
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
// A Router is safe for concurrent use.
package router
