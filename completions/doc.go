// Package completions serves the legacy POST /v1/completions (spec §4.2):
// request and reply types, validation, the [Backend] interface that
// produces replies, and the handler that owns the wire, as JSON or as an
// SSE stream. It is built like package chat, and shares its wire types
// with it through package endpoint ([endpoint.Usage],
// [endpoint.FinishReason], [endpoint.Stop] and [endpoint.StreamOptions]).
//
//	catalog := models.NewMemoryCatalog(demo.TextModels()...)
//	completions.Register(mux, completions.NewHandler(catalog, demo.NewTextBackend().Completions()))
//	server := auth.Middleware(keys)(mux)
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # A request's way through the handler
//
//  1. Decode: the body (at most 8 MiB, [endpoint.WithMaxRequestBytes]) must be one
//     JSON object that names each member once (see package endpoint); every way it can be wrong is a 400 invalid_request_error
//     that says what is wrong. Fields the [Request] does not model (suffix,
//     echo, logprobs, best_of, seed, user, …) are kept in Request.Extra and
//     reach the backend.
//  2. Validate ([endpoint.WithValidator]); each failure is a 400 naming the field,
//     with param its JSON path: model and prompt are required; prompt is a
//     string or a non-empty array of strings (arrays of token ids are
//     refused); max_tokens is 1 to 2³¹−1; temperature is 0 to 2 and top_p
//     0 to 1, as for chat; n is 1 to 128, and n times the number of prompts
//     at most 128 ([MaxChoices]); stop holds at most 4 sequences.
//  3. Check the model (spec §1) with models.Require, for endpoint type
//     compat: 404 model_not_found, or a 400 with param "model".
//  4. Reserve the request's estimated tokens against the API key
//     (auth.Reserve): the request body's bytes / 4, plus the number of
//     choices (prompts times n) times the output cap (max_tokens, else
//     the model's OutputTokenLimit, else 4096). When all of the key's
//     quota is already reserved by requests in flight, the answer is 403
//     insufficient_quota and the backend is not asked.
//  5. Ask the [Backend] with the request's context, answer, and settle
//     the reservation to the reply's total_tokens, as package chat does
//     (a stream whose backend reported no usage is charged the prompt's
//     estimate plus a quarter of the bytes of text sent, and nothing if
//     it sent none).
//
// # Replies
//
// An array prompt is a batch: each prompt gets n choices, those of prompt
// i at indexes i*n to i*n+n-1, as in OpenAI's API. The handler owns the
// id ("cmpl-" and 26 base32 characters), created ([endpoint.WithClock]), model,
// object (text_completion), indexes and usage totals; the backend gives
// the text and finish reason (stop, length or content_filter; stop by
// default) of each choice.
//
// The JSON reply is the [Completion] of spec §2.3. With "stream": true
// the reply is an SSE stream of [Chunk] events with the spec's headers:
// every chunk has the same id and no model (spec §2.3), carries one
// choice with a fragment of its text, and finish_reason is null except in
// each choice's last chunk. stream_options.include_usage, which the spec
// does not list but OpenAI accepts, adds a final chunk with "choices": []
// and the usage. The stream ends with data: [DONE]; an error after the
// first event ends it with one data: {"error":{…}} event and no [DONE],
// as in package chat; keep-alive comments bridge silences
// ([endpoint.WithKeepAlive]).
//
// A [Backend] describes content only, and may carry what an upstream
// encoded with the data, as in package chat: [Params.Body], the request
// body as the client sent it; a [Delta]'s chunk ([Delta.SetChunk]) and a
// [Result]'s reply ([Result.SetReply]), logprobs included, which the
// handler writes after its own id, object, created (and, in the JSON
// reply, model and usage) as long as the Delta or Result still says what
// they say. The handler flushes as in package chat:
// after every delta, unless the stream calls [Params.Flush] (a relay's,
// before each read of the upstream's reply), then at those calls and at
// the end.
//
// # Backends
//
// A [Backend] returns the whole reply (Complete); a [StreamingBackend]
// also streams it as an iter.Seq2[Delta, error] that the handler ranges
// over in the request's goroutine, writing each delta's chunk before the
// iterator runs on, as in package chat. A backend that does not stream
// still serves streams: the handler sends each choice's text in one
// chunk, the whole reply in one write ([Deltas]). The context is the
// request's; a client that goes away cancels it, and nothing is left
// running.
//
// # Options
//
// [NewHandler] takes the options of package endpoint ([Option]):
// endpoint.WithLogger, WithMaxRequestBytes, WithValidator, WithAllowed,
// WithKeepAlive, WithErrorHook and WithClock. The options of other
// packages (responses.WithStore, images.WithURLKey…) do not compile here.
package completions
