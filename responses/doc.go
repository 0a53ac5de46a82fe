// Package responses serves the responses endpoint of the gateway API:
// POST /v1/responses (spec §4.3), its stored conversations
// (previous_response_id, and the "conversation" of package
// conversations), GET and DELETE /v1/responses/{id}, GET
// /v1/responses/{id}/input_items, POST /v1/responses/compact, and the
// background responses (POST /v1/responses/{id}/cancel, resumable
// streams). It
// holds the request and reply types, the typed stream events, the
// [Backend] interface that produces replies, the [Store] that keeps
// responses, and the handler that owns the wire.
//
//	catalog := models.NewMemoryCatalog(demo.TextModels()...)
//	responses.Register(mux, responses.NewHandler(catalog, demo.NewTextBackend().Responses()))
//	server := auth.Middleware(keys)(mux)
//
// One handler serves the six routes of [Patterns] ([Register] mounts
// them on a ServeMux; on any other router, mount the routes of [Routes],
// see package route), routing them with a ServeMux of its own: under a
// prefix, mount it through http.StripPrefix.
//
// # Creating a response
//
//  1. Decode: the body (at most 8 MiB, [endpoint.WithMaxRequestBytes]) must be one
//     JSON object that names each member once (see package endpoint); every way it can be wrong is a 400 invalid_request_error
//     that says what is wrong, with param naming the field. Fields the
//     types do not model (reasoning, truncation, user, include…) are
//     kept in Request.Extra (and the Extra of Item, ContentPart and Tool)
//     and reach the backend, so that a relay forwards the request as sent.
//  2. Validate, with one go-playground validator per handler
//     ([endpoint.WithValidator]) and the rules the tags cannot say: model and input
//     are required; input is a string or a non-empty array of items; a
//     message item (type "message", or no type and a role) has a role
//     (user, assistant, system, developer) and content (a string or a
//     non-empty array of parts, each with a type; an input_image part an
//     http(s) URL or a data:image/…;base64 URI, or a file_id); a
//     function_call item has call_id and name; a function_call_output item
//     call_id and output; a compaction item encrypted_content; other item
//     types pass through. temperature is 0 to 2, top_p 0 to 1,
//     max_output_tokens 1 to 2³¹−1 (endpoint.MaxOutputTokens); tools have a type, function tools a
//     name; tool_choice is none, auto, required or an object with a type
//     ({"type":"function","name"} must name one of the tools, and the
//     forcing forms need tools); text.format (structured output) is text,
//     json_object, or json_schema with a name; metadata holds at most 16
//     pairs, keys of at most 64 characters and values of at most 512, as
//     OpenAI limits it. These rules are plain Go checks of the package; a
//     validator given with [endpoint.WithValidator] adds its own after.
//  3. Check the model (spec §1) with models.Require: unknown, or not allowed
//     to the caller's key ([endpoint.WithAllowed]), is 404 model_not_found; a model
//     whose supported_endpoint_types lacks "compat-response" is a 400 with
//     param "model".
//  4. Resolve the conversation of previous_response_id from the [Store],
//     or the items of the conversation that "conversation" names from the
//     [ConversationStore] (see below), into [Params] History. A store
//     that fails, here or on the routes that read and delete stored
//     responses, is a 503 service_unavailable with Retry-After
//     (apierrors.FromDependency).
//  5. Reserve the request's estimated tokens against the API key
//     (auth.Reserve): the request body's bytes / 4, plus the total tokens
//     of the previous response of the conversation (for a "conversation",
//     a quarter of its items' estimated bytes), plus the output cap
//     (max_output_tokens, else the model's OutputTokenLimit, else 4096;
//     compactions always assume the latter two). When all of the key's
//     quota is already reserved by requests in flight, the answer is 403
//     insufficient_quota and the backend is not asked. (A request not
//     behind auth.Middleware reserves and is charged nothing.)
//  6. Ask the [Backend] with the request's context; store the response
//     unless "store" is false (and add its items to its conversation, if
//     it names one); answer; settle the reservation to the
//     reply's total_tokens. A failed reply is charged nothing (but one
//     that was generated and could not be stored: see "Stored
//     conversations"); a stream
//     is charged the last usage the backend reported, even if it failed
//     or its client left, and, if the backend reported none, the prompt's
//     estimate plus a quarter of the bytes of output sent (nothing if it
//     sent none). A backend
//     error that is an *apierrors.Error is sent as it is; any other is a
//     500 whose text is only logged.
//
// # The response object
//
// The handler owns everything on the wire but the content: the id
// ("resp_" and 26 base32 characters, 128 random bits), item ids ("msg_…"
// for messages, "fc_…" for function calls, "rs_…" for the reasoning items
// of reasoning models, whose summary is one summary_text part, or none
// for an item that carries only its encrypted_content; a reasoning item
// with encrypted content may keep its backend's id, see [Output]) and call
// ids ("call_…", when
// the backend gives none), created_at and completed_at ([endpoint.WithClock]),
// object names, usage totals (total_tokens = input_tokens +
// output_tokens, always) and the echoes of the request. [Response]
// documents every member; all are always sent, null when they do not
// apply, as OpenAI sends them, so the official SDKs parse them exactly,
// but for conversation ({"id"}), sent only when the request named one.
//
// status is one of:
//
//   - completed: the reply is whole.
//   - incomplete: the backend stopped early ([Result] Incomplete, or a
//     [Delta] with Incomplete); incomplete_details.reason says why
//     ("max_output_tokens" when the cap was reached, "content_filter"), and
//     the last item, unless it is a function call (never cut), has status
//     incomplete.
//   - failed: only in a stream that failed after it started (see
//     Streaming); error is {"code","message"}, the code of the
//     *apierrors.Error that failed it ("bad_gateway",
//     "internal_server_error"…) and its client-facing message. A request
//     without "stream" that fails is answered with the error itself, as
//     JSON with its real status (for example 502 bad_gateway): its response
//     id was never sent, and the SDKs surface an HTTP error as an error.
//   - in_progress: only in the created and in_progress events.
//
// # Streaming
//
// With "stream": true the reply is an SSE stream (spec §6) written with
// package sse. Each event has an event: line naming its type, and data
// holding the same "type" and a "sequence_number" counting from 0:
//
//	event: response.output_text.delta
//	data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_…","output_index":0,"content_index":0,"delta":"Hi","logprobs":[]}
//
// The events follow OpenAI's lifecycle, the one the official SDKs
// accumulate: response.created and response.in_progress (the response,
// status in_progress, output []); then for each output item, in order,
// response.output_item.added, and for a message
// response.content_part.added, response.output_text.delta…,
// response.output_text.done, response.content_part.done; for a
// reasoning item the same with response.reasoning_summary_part.added,
// response.reasoning_summary_text.delta… and .done, and
// response.reasoning_summary_part.done (summary_index 0), none of them
// for an item without a summary; for a function
// call response.function_call_arguments.delta… and
// response.function_call_arguments.done; then response.output_item.done
// with the whole item. Exactly one terminal event ends the stream:
// response.completed, response.incomplete or response.failed, carrying
// the whole response with its usage. A data: [DONE] line follows it, as
// every event stream of the spec (§6) ends: the official SDKs stop on it
// cleanly, as they stop on the terminal event.
// No event has a top-level "error" member (the SDKs would stop on it).
//
// The created event waits for the backend's first delta, so a backend
// that fails at once is answered as JSON with a real status. A failure
// after the stream started ends it with response.failed, whose response
// holds the output so far (an unfinished item with status incomplete) and
// the usage if the backend reported any. While the backend is silent a
// ": keep-alive" comment line is written every 15 seconds
// ([endpoint.WithKeepAlive]). The streamed response is stored as it ended
// (completed, incomplete or failed), before its terminal event is sent;
// one whose client went away is not.
//
// # Stored conversations
//
// Unless the request says "store": false, the response is kept in the
// [Store] ([WithStore]; by default a [MemoryStore] per handler, bounded to
// [DefaultMaxResponses] (10 000) responses, [DefaultMaxBytes] (256 MiB) of
// estimated size and [DefaultMaxAge] (30 days), least recently stored
// evicted first; other bounds through [MemoryStoreOptions] and
// [NewMemoryStore]) with its input items. A stored response
// belongs to the owner of the request that created it ([WithOwner], an
// auth.OwnerFunc, the same policy as the video tasks of package videos:
// by default auth.AccountOwner, the API key's account; requests without
// a principal share auth.AnonymousOwner; an OwnerFunc that refuses a
// request makes it a 401 missing_authorization), and every other owner
// is answered as if it did not exist: GET and DELETE /v1/responses/{id}
// give 404 not_found in the general error shape, and a previous_response_id
// naming it (or no stored response at all) is a 400 invalid_request_error
// with param "previous_response_id". DELETE answers {"id","object":
// "response","deleted":true}. A response is stored when it has ended:
// while a stream is still running, GET answers 404 for it.
//
// A response that the store fails to keep (a full disk, a database that
// cannot be reached) is never reported as stored: the client is told,
// and the response, which was generated, is charged. A JSON request is
// answered 500 internal_server_error, "The response was generated and
// charged, but it could not be stored: …", with "X-Should-Retry: false"
// so that the official SDKs do not send it again on their own (each try
// is charged); a stream ends with response.failed carrying that error
// and the whole output in place of response.completed (or incomplete),
// since the terminal event waits for the store. The store's error is
// logged, not sent; metrics.Metrics.Responses (module
// github.com/gatewaykit/gatewaykit/observe) counts these responses.
//
// GET /v1/responses/{id}/input_items lists a stored response's input
// items as OpenAI does ([InputItemList]: newest first unless order=asc,
// limit 1 to 100, default 20, after an item id). Stored input items carry
// ids (the request's, or new ones: "msg_…", "fc_…", "fco_…" for function
// outputs, "cmp_…", "item_…"), and messages have their content as an
// array of parts and status completed; [Params] History hands the
// backends the items in that form.
//
// previous_response_id continues a conversation: the handler follows the
// chain of previous_response_id back (at most [MaxConversationDepth]
// responses) and hands the backend, in [Params] History, the input items
// and then the output items of each earlier response, oldest first;
// [Params.Items] appends the new input. As in OpenAI's API, earlier
// instructions are not carried over. An earlier response that has been
// deleted or evicted ends the chain: the conversation starts after it.
//
// # Conversations of /v1/conversations
//
// "conversation" (a conversation id, or {"id": …}) names a conversation
// of the [ConversationStore] given with [WithConversations] (package
// conversations serves them on /v1/conversations; package gateway mounts
// both over one store). The conversation's items, the newest
// [MaxConversationItems], are [Params] History; once the reply has ended,
// unless the request says "store": false or the response failed (or the
// client of a stream went away), its input items (with their ids, as
// stored with the response) and its output items (with the output's ids)
// are added to the conversation, all or none, after the response is
// stored. The response carries "conversation": {"id"}. As in OpenAI's
// API:
//
//   - conversation with previous_response_id is a 400
//     invalid_request_error, "Mutually exclusive parameters: …", param
//     null;
//   - a conversation that the owner has not (or none: without
//     WithConversations every one is unknown) is a 404 not_found with
//     param "conversation";
//   - an input item whose id the conversation holds (or that another
//     input item has) is a 400 naming it: "Duplicate item found with id
//     …".
//
// Items that the store fails to add (the conversation was deleted
// meanwhile, the database went away) are reported as a response that
// could not be stored is: a 500 that says the response was generated and
// charged but not added to the conversation, with "X-Should-Retry:
// false", or a stream that ends with response.failed carrying it.
//
// # Background responses
//
// With a [Background] ([WithBackground]; package gateway always gives
// its handler one), a request with "background": true is answered at
// once with the response in status queued and "background": true, and
// runs on the Background's workers: a bounded pool ([WithWorkers],
// default [DefaultRunWorkers]) that claims runs from a [RunStore] with
// leases, as the video runner claims tasks, so that several gateway
// processes may share a store (package store/sqlite's, and
// store/postgres's across replicas; [MemoryRunStore] for one process).
// The run asks the handler's backend in the foreground, whatever the
// backend is (the demo's, fromchat's, a relay's: the upstream is asked
// for a plain reply, and the gateway runs it in the background itself),
// with [Params.InBackground] set, through the handler's interceptors
// (endpoint.WithInterceptors), which run on the worker: their Call's
// Principal holds only the key that the run charges, and a refusal ends
// the run failed with its error. "background" needs "store": true (a
// 400 with param "background" otherwise), and a handler without a
// Background answers it with a 400 too.
//
// GET /v1/responses/{id} polls it: queued, in_progress, then completed,
// incomplete, failed or cancelled, owner-scoped like stored responses.
// POST /v1/responses/{id}/cancel cancels it: a queued run ends at once; a
// running one has its backend's context cancelled (on its own process at
// once, on another replica at its worker's next lease renewal, every
// second by default, [WithCancelCheck]), keeps the output so far (the
// open item incomplete) and ends cancelled. The answer waits for the
// worker's record (at most 5 s) and is the response as it ended:
// cancelled with the output so far, or, for a run that ended before its
// worker learnt of the cancel, as it ended; a worker that does not
// answer in time (its process died) leaves the answer cancelled, and
// the run ends so once its lease runs out. A background response that has ended
// (cancelled before, completed, failed or incomplete) is answered as it
// is, unchanged, as OpenAI's API does; a response that was not created
// in the background is a 400 invalid_request_error; an unknown one a 404. The quota reserved
// at create is settled when the run ends, whatever ends it (completion,
// failure, cancel, delete): to the usage reported, or else the estimate
// of the prompt and of the output written; to nothing for a run that
// never ran ([WithKeyStore] names the key store).
//
// A process that dies leaves its runs to the others once their leases
// run out ([WithLease], default 30 s; see [RunStore]): a run that no
// client saw any of (not streamed, or streamed but not begun) is run
// again from the start, at most [DefaultRunMaxAttempts] claims in all;
// one whose events a client may have seen is failed (code server_error),
// because running it again would stream other events under the same
// sequence numbers. A run is never left to nobody, and never runs twice
// once any of it was seen; a run that is run again was asked of its
// backend once before, in part, by the process that died, whose usage is
// not known and not charged (the run is charged once, for the attempt
// that ended it). A process that shuts down releases its runs (they are
// claimed at once under the same rule); store/sqlite's Open ends the
// leases of the runs that the previous process held.
//
// # Resumable streams
//
// A background request with "stream": true streams its events as the run
// produces them (the same events as a foreground stream), from the run's
// event log: the client may go away, the run goes on. GET
// /v1/responses/{id}?stream=true&starting_after=N (stream and
// starting_after in the query, or in a JSON body as the Go SDK's
// GetStreaming sends them) replays the logged events whose
// sequence_number is above N (all of them without starting_after), then
// follows the live run to its end, on any process sharing the store: a
// follower is told of new events by its own process's workers, and asks
// the store every [DefaultFollowPoll] (200 ms, [WithFollowInterval])
// otherwise. A client that drops after event N and resumes with
// starting_after=N sees every event exactly once. The stream ends after
// the terminal event (completed, incomplete, failed) with [DONE]; a
// cancelled run has no terminal event in OpenAI's API, and its stream
// just ends with [DONE]. The log of a run keeps its newest
// [MaxRunEvents] (10 000) events (a resume from before them is a 400
// with param starting_after), and is kept with the run for
// [DefaultRunRetention] (24 h, [WithRetention]) after the run ended; the
// response itself stays in the [Store]. Responses that were not created
// with "background" and "stream" are not kept as events: streaming them
// is a 400 with param stream.
//
// # Compaction
//
// POST /v1/responses/compact takes OpenAI's compact request ([CompactRequest]:
// model, and input and/or previous_response_id) and answers OpenAI's
// compacted response ([CompactedResponse], object "response.compaction"):
// the conversation's user messages, then one compaction item whose
// encrypted_content a later request sends back as an input item
// {"type":"compaction","encrypted_content"} in place of the conversation.
// The content comes from the backend's [Compactor] capability and is
// opaque to the handler. A backend that is not a Compactor answers 400
// invalid_request_error, param "model" ("does not support compaction"):
// only the model's backend can read what it would write there.
// Compactions are charged but not stored.
//
// # Backends
//
// A [Backend] has one method, Complete, that returns the whole reply. A
// [StreamingBackend] adds Stream, an iter.Seq2[Delta, error] that the
// handler ranges over in the request's goroutine, writing each delta's
// events before the iterator runs on, as in package chat: it flushes
// after every delta, unless the stream calls [Params.Flush] (a relay's,
// before each read of its upstream), then at those calls and at the end.
// A backend that does not stream still serves streaming requests, each
// output item sent whole, the reply in one write ([Deltas]).
// The context is the request's: when the client goes away it is
// cancelled, the backend must return, and nothing is left running. A
// backend that breaks the streaming contract (an item index that is not
// the current or the next one, a function call without a name, a delta
// of the wrong kind for its item) ends the stream with
// response.failed and a 500 internal_server_error.
//
// Package responses/fromchat makes any chat.Backend a StreamingBackend
// (fromchat.New): a model served for chat completions serves this
// endpoint too, without a backend of its own.
//
// # Performance
//
// A request is decoded in one pass of encoding/json (input items through
// a method-less shadow type), and the fields that no type models are
// collected by a scan of the body, which allocates only for the fields it
// keeps. The per-token events (text and argument deltas) and the item events
// are encoded by hand into one reused buffer, as encoding/json would
// encode them (tests check it), and so is the response object, in the
// JSON reply and in the lifecycle events. The benchmarks beside the
// package measure the whole stack against a raw net/http handler;
// BENCHMARKS.md at the repository root records the figures.
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
// WithKeepAlive, WithErrorHook and WithClock; and this package's own,
// [WithStore], [WithConversations], [WithOwner] and [WithBackground], which no other
// package takes. The options
// of other packages (images.WithURLKey…) do not compile here.
package responses
