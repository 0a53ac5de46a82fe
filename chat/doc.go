// Package chat serves POST /v1/chat/completions (spec §4.1): request and
// reply types, validation, the [Backend] interface that produces replies,
// and the handler that owns the wire, as JSON or as an SSE stream.
//
//	catalog := models.NewMemoryCatalog(demo.TextModels()...)
//	chat.Register(mux, chat.NewHandler(catalog, demo.NewTextBackend().Chat()))
//	server := auth.Middleware(keys)(mux)
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # A request's way through the handler
//
//  1. Decode: the body (at most 8 MiB, [endpoint.WithMaxRequestBytes]) must be one
//     JSON object that names each member once (see package endpoint); every way it can be wrong is a 400 invalid_request_error
//     that says what is wrong, with param naming the field when there is
//     one. Fields the types do not model are kept (Request.Extra, and the
//     Extra of Message, ContentPart, Tool and StreamOptions) and reach the
//     backend, so that a relay forwards them.
//  2. Validate, in plain Go: every rule is a check of package chat (the
//     request types carry no validate tags); a validator given with
//     [endpoint.WithValidator] then applies its own rules (struct-level
//     ones, registered on it) to the requests that pass them. Each failure is a 400 whose message names the field and whose param
//     is its JSON path
//     ("messages[2].content[0].image_url.url"):
//     model and messages are required, with at least one message; roles are
//     system, developer, user, assistant or tool; content is a string or a
//     non-empty array of parts, required except on an assistant message
//     with tool_calls; a part has a type, and an image_url part an http(s)
//     URL or a data:image/…;base64 URI; tool messages carry tool_call_id;
//     temperature is 0 to 2 and top_p 0 to 1; n is 1 to 128 ([MaxChoices]);
//     max_tokens and max_completion_tokens are 1 to 2³¹−1
//     (endpoint.MaxOutputTokens); stop holds at
//     most 4 sequences; tools are function tools with a name; tool_choice is
//     none, auto, required or {"type":"function","function":{"name"}} naming
//     one of the tools, and the forcing forms need tools; response_format is
//     text, json_object or json_schema (with a named json_schema).
//  3. Check the model (spec §1) with models.Require: unknown, or not
//     allowed to the caller's key ([endpoint.WithAllowed]), is 404 model_not_found;
//     a model whose supported_endpoint_types lacks "compat" is a 400 with
//     param "model".
//  4. Reserve the request's estimated tokens against the API key
//     (auth.Reserve): the prompt's estimate (the request body's bytes / 4)
//     plus n times the output cap (max_completion_tokens, else
//     max_tokens, else the model's OutputTokenLimit, else 4096). When
//     all of the key's quota is already reserved by requests in flight,
//     the answer is 403 insufficient_quota and the backend is not asked.
//     (A request not behind auth.Middleware reserves and is charged
//     nothing.)
//  5. Ask the [Backend] with the request's context, then answer, and
//     settle the reservation to the reply's total_tokens. A failed reply
//     is charged nothing; a stream is charged the last usage that the
//     backend reported, even if the stream failed or its client left;
//     and a stream whose backend reported none (it ended, failed or was
//     abandoned first) is charged the prompt's estimate plus a quarter of
//     the bytes of output (content, reasoning, tool calls) sent, and
//     nothing if it sent none. See
//     package auth for the bound this puts on a key's overrun. A backend
//     error that is an *apierrors.Error is sent as it is; any other is a
//     500 whose text is only logged.
//
// # Replies
//
// The handler owns everything on the wire but the content: the id
// ("chatcmpl-" and 26 base32 characters, 128 random bits), "created"
// ([endpoint.WithClock]), "model" (the request's, or [Result] Model), object
// names, choice indexes, usage totals (total_tokens = prompt_tokens +
// completion_tokens, always; the details of [Usage], sent only when the
// backend reports them, at most the counts they are parts of) and, when
// streaming, the framing below. A
// [Backend] only says what the model produced, so every backend (the demo,
// a relay, an embedder's) follows the spec's conventions.
//
// The JSON reply is the [Completion] of spec §2.1: n choices, each an
// assistant message whose content is null when the choice only calls
// tools, with reasoning_content from reasoning models, tool_calls (ids
// "call_…" filled in when the backend gives none), a finish_reason (stop,
// length, tool_calls or content_filter; by default tool_calls when the
// choice calls tools and stop otherwise) and usage.
//
// # Streaming
//
// With "stream": true the reply is an SSE stream (spec §2.2, §6), written
// with package sse: Content-Type: text/event-stream, Cache-Control:
// no-cache, Connection: keep-alive, and one event per [Chunk]:
//
//   - Every chunk has the same id, created and model, and object
//     chat.completion.chunk; it carries one choice.
//   - The first chunk of each choice carries delta.role "assistant".
//   - finish_reason is null in every chunk but the last of each choice,
//     which carries the finish reason and an empty delta ("delta":{}), as
//     OpenAI sends it: the official SDKs' accumulators see content and tool
//     calls as finished on that chunk.
//   - Tool calls are streamed as OpenAI does: the first fragment of a call
//     carries its index (0-based, contiguous in its choice), id, type
//     "function", the function name and empty arguments; later fragments
//     carry the same index and a piece of the arguments.
//   - With stream_options.include_usage, one more chunk follows, with
//     "choices": [] and the usage; no other chunk carries usage. Without
//     it, no chunk does (the usage is charged all the same).
//   - The stream ends with data: [DONE].
//   - Chunks never carry an "error" key.
//
// A [Backend] describes content only, and may carry what an upstream
// encoded along with it, with the data: [Params.Body] is the request body
// as the client sent it, which a relay sends upstream; a [Delta] may
// carry its upstream's chunk ([Delta.SetChunk]) and a [Result] its
// upstream's reply ([Result.SetReply]). The handler then writes its own
// id, object, created and model, followed by the upstream's other members
// as they are (system_fingerprint, logprobs, …), and the backend answers
// for the rules above; the handler adds the usage. Nothing is found on
// the backend's type or in the context, so a backend that wraps another
// (a router, a logging or guardrail wrapper) and passes the Params and
// the deltas along keeps all of it; one that changes a delta's content
// gets it encoded by the handler, never a chunk that says otherwise.
//
// Errors: until the first event, a failure is answered as JSON with its
// real status, like any other error. After it, the stream ends with one
// event data: {"error":{"message","type","param","code"}} and no [DONE],
// which the official SDKs surface as an error. While the backend is
// silent, a ": keep-alive" comment line is written every 15 seconds
// ([endpoint.WithKeepAlive]); the first one sends the headers.
//
// # Backends
//
// A [Backend] has one method, Complete, that returns the whole reply of a
// request: the non-streaming path. A [StreamingBackend] adds Stream, which
// returns an iter.Seq2[Delta, error]; the handler ranges over it in the
// request's goroutine (the iterator runs on the goroutine that ranges
// over it, so no goroutine or channel comes between them) and writes one
// chunk per [Delta] before the iterator runs on. It flushes after every
// Delta, unless the stream says when: a stream that calls
// [Params.Flush] before it waits for its source (the relay before each
// read of its upstream, the demo before each pause) is flushed then and
// at its end, so that what it yields between two waits leaves in one
// write. A backend that does not stream still serves streaming requests:
// the handler streams the Result of Complete in a few chunks (reasoning,
// content, each tool call, finish), all in one write ([Deltas]).
//
// The context passed to a backend is the request's. When the client goes
// away it is cancelled: the backend must return, Stream's loop stops (yield
// returns false), and the handler returns without writing more; nothing is
// left running. A backend that breaks the streaming contract (a choice
// index out of range, a delta after the choice's finish reason, a tool
// call index that skips one, a first tool-call fragment without a name) ends
// the stream with a 500 error event.
//
// # Performance
//
// Requests of the usual shape are decoded by hand, in one pass over the
// body and without reflection, fields that no type models included; any
// other body (an unusual shape, or invalid) is decoded again by
// encoding/json, which writes the errors, and a fuzz test checks that the
// two agree. Replies and chunks are encoded by hand into one reused
// buffer, byte for byte as encoding/json encodes [Completion] and [Chunk]
// (tests check it). Each chunk is written with one call, and flushed as
// the stream says (see Backends): a burst that the stream yields between
// two calls of [Params.Flush] costs one write system call instead of one
// per chunk, and a reply that is all at hand goes out in one. The
// benchmarks beside the package measure the whole stack against a raw
// net/http handler; BENCHMARKS.md at the repository root records the
// figures.
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
// # Options
//
// [NewHandler] takes the options of package endpoint ([Option]):
// endpoint.WithLogger, WithMaxRequestBytes, WithValidator, WithAllowed,
// WithKeepAlive, WithErrorHook, WithClock and WithInterceptors. The options of other
// packages (responses.WithStore, images.WithURLKey…) do not compile here.
package chat
