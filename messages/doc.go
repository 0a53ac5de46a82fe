// Package messages serves POST /v1/messages, the messages format
// (Anthropic-compatible) of spec §4.4, over any chat backend: the demo,
// the relay to an OpenAI-compatible upstream, an embedder's own
// [chat.Backend]. The handler translates the request into a chat request,
// asks the backend, and answers in the messages format, as JSON or as
// that format's event stream; it owns the wire as the chat handler does.
//
//	catalog := models.NewMemoryCatalog(demo.TextModels()...)
//	messages.Register(mux, messages.NewHandler(catalog, demo.NewTextBackend().Chat()))
//	server := auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor))(mux)
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// The package also holds the format's wire types ([Request], [Reply],
// [Event] …), which the relay uses to talk to upstreams that speak the
// format natively (relay.APIAnthropic).
//
// # A request's way through the handler
//
// The steps are those of the chat handler (decode, validate, model check,
// quota reservation, backend, reply, settlement), with the format's
// rules:
//
//   - Credentials: the auth middleware reads x-api-key as well as
//     Authorization: Bearer. Any anthropic-version header is accepted, an
//     unknown one or none included; anthropic-beta is ignored.
//   - The body (at most 8 MiB, [endpoint.WithMaxRequestBytes]) is one
//     JSON object that names each member once (as package endpoint
//     says). Members that [Request] does not model are ignored.
//   - Validation, each failure a 400 invalid_request_error whose message
//     starts with the JSON path of the field: model and max_tokens (1 to
//     2³¹−1, endpoint.MaxOutputTokens) are required, and at least one message; roles are user
//     and assistant; content is a string or an array of blocks (user:
//     text, image, tool_result; assistant: text, tool_use, thinking,
//     redacted_thinking); an image's source is base64 data with an
//     image/… media_type, or an http(s) url; tool_use blocks carry id,
//     name and an object input; tool_result blocks carry tool_use_id and
//     text or image content; temperature and top_p are 0 to 1, top_k at
//     least 0; tools are client tools with a name (server tools are
//     refused); tool_choice is auto, any (needs tools), tool (naming one
//     of the tools) or none; thinking is disabled, or enabled with a
//     budget_tokens of at least 1024 and below max_tokens; system is a
//     string or text blocks.
//   - The model must exist, be allowed to the caller's key and list the
//     compat endpoint type (404 not_found_error, 400).
//   - The reservation is the body's bytes / 4 plus max_tokens.
//
// # Translation to a chat request
//
// system becomes a system message (its blocks' text joined with "\n");
// each message keeps its role; text blocks become text parts and image
// blocks image_url parts (a base64 source as a data: URI); a user
// message's tool_result blocks become tool messages (tool_call_id from
// tool_use_id, content the result's text, "(error) " before it when
// is_error is set) placed before the rest of that message; an assistant
// message's text blocks become its content and its tool_use blocks its
// tool_calls (arguments: the input encoded); thinking blocks are left
// out. tools become function tools (input_schema as parameters);
// tool_choice auto, any, tool and none become auto, required, the named
// function and none, and disable_parallel_tool_use parallel_tool_calls:
// false. max_tokens, stop_sequences, temperature and top_p keep their
// meaning; top_k and metadata.user_id go as the chat request's extra
// members top_k and user (which a relay forwards); thinking enabled on a
// reasoning model becomes reasoning_effort (low below a budget of 4096
// tokens, medium below 16384, high above). A streamed request asks the
// backend for a stream with its usage.
//
// # Replies
//
// The JSON reply is a [Reply]: id "msg_" and 26 base32 characters, type
// "message", role "assistant", model (the request's, or the backend's
// [chat.Result] Model), content blocks — thinking (the reasoning, with an
// empty signature), text, and one tool_use per tool call (id from the
// backend, else "toolu_…"; input the arguments, {} when empty; arguments
// that are not a JSON object are a 500) — stop_reason, stop_sequence
// (always null), and usage (input_tokens and output_tokens: the chat
// usage's prompt and completion tokens). Content-Type is
// application/json. Stop reasons: stop is end_turn, length max_tokens,
// tool_calls tool_use, content_filter refusal ([StopReasonOf]). A chat
// backend does not say whether a stop sequence ended a reply, so
// stop_sequence is never a stop reason of this handler.
//
// # Streaming
//
// With "stream": true the reply is an SSE stream of named events (an
// event: line on every event), in the format's order:
//
//	message_start        {"type":"message_start","message":{…,"content":[],"stop_reason":null,"usage":{…}}}
//	content_block_start  index 0, the first block (empty)
//	ping                 once, after the first content_block_start
//	content_block_delta  text_delta, thinking_delta or input_json_delta
//	content_block_stop   index 0
//	content_block_start  index 1 …
//	message_delta        {"delta":{"stop_reason","stop_sequence":null},"usage":{"input_tokens","output_tokens"}}
//	message_stop
//
// message_start goes out with the backend's first delta, so that a
// backend that fails at once is answered with a JSON error and its real
// status; its usage has the input tokens reported so far (the prompt's
// estimate until the backend reports any) and output_tokens 0. Content
// blocks are numbered 0, 1, 2… in order and streamed one at a time:
// reasoning makes a thinking block, content a text block, each tool call
// a tool_use block (its arguments as input_json_delta fragments); a
// delta of another kind closes the open block. A backend that interleaves
// the fragments of two tool calls cannot be carried by the format: the
// stream ends with an error. message_delta carries the stop reason and
// the last usage that the backend reported (or the estimate from the
// output sent).
//
// Errors come in the format's envelope, {"type":"error","error":{"type",
// "message"}} (apierrors.Messages; the error type follows the status),
// with "x-should-retry: false" on a 4xx other than 408, 409 and 429, so
// that the official clients do not retry what cannot succeed. After a
// stream has started, a failure ends it with one "error" event carrying
// the same envelope, as the format's own streams do.
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes, WithAllowed,
// WithKeepAlive and WithErrorHook. endpoint.WithValidator and WithClock do
// not compile here (the handler checks the format's rules itself and runs
// no validator of yours, and replies carry no time), nor do the options of
// other packages.
package messages
