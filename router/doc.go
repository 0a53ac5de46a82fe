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
// A Router is safe for concurrent use.
package router
