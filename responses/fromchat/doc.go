// Package fromchat serves the responses API from a chat backend: [New]
// makes any chat.Backend (the demo's, the relay's, an embedder's own
// model) a responses.StreamingBackend, so that one model answers POST
// /v1/responses as well as chat completions, the messages format and the
// Gemini style, with no second backend to write.
//
//	text := myChatBackend()
//	chat.Register(mux, chat.NewHandler(catalog, text))
//	responses.Register(mux, responses.NewHandler(catalog, fromchat.New(text)))
//
// The responses handler keeps what is its own: the wire, the ids, the
// stored conversations (previous_response_id is resolved from its Store
// into Params History, which the chat backend receives whole: it needs
// to keep nothing), the quota. The backend only translates, both ways.
// A backend of its own (the demo's Responses, the relay's, which sends
// OpenAI-format upstreams the responses request as it is) stays the
// better choice where there is one: it keeps what the chat format cannot
// carry (hosted tools, reasoning items, compaction).
//
// # The request
//
// [ChatParams] makes the chat request:
//
//   - instructions: a system message, first;
//   - the conversation (Params.Items: the stored History, then the
//     input): a message item keeps its role (user, system, developer,
//     assistant) and its content, a string as a string, parts as parts
//     (input_text and output_text as text, refusal as its text,
//     input_image by URL as image_url with its detail); an assistant
//     message is its text. A function_call is a tool call of an
//     assistant message (calls that follow an assistant message join it:
//     one turn), a function_call_output a tool message with its
//     call_id and its output's text;
//   - tools: function tools as function tools (name, description,
//     parameters, strict); tool_choice none, auto, required or a named
//     function as the same (dropped when there are no tools);
//   - text.format json_object and json_schema as response_format (text is
//     chat's default); text.verbosity as verbosity;
//   - temperature, top_p, and max_output_tokens as max_completion_tokens;
//     reasoning.effort as reasoning_effort; parallel_tool_calls false as
//     the same; stream as stream, with stream_options.include_usage;
//   - the members that neither type models but that both APIs share
//     (user, safety_identifier, prompt_cache_key, service_tier), and the
//     sampling members of other providers' chat APIs (seed, top_k,
//     presence_penalty, frequency_penalty) go as they were sent, for a
//     relay to forward.
//
// The chat request asks for one choice, and carries the request's model
// and catalogue entry.
//
// # Refused
//
// What the chat format cannot carry is a 400 invalid_request_error
// naming the param: a tool of another type than function (web_search,
// file_search, mcp…: "tools[0].type"), a tool_choice object other than a
// function ("tool_choice.type"), an item of another type than message,
// function_call, function_call_output and reasoning (compaction,
// item_reference, hosted tool calls…: "input[2].type"), a part of another
// type than those above (input_file, input_audio: "input[0].content[1].type"),
// and an image by file_id ("input[0].content[1].file_id"). Such an item
// in the stored conversation, which a response of another model may have
// left there, is refused with param "previous_response_id"; a
// conversation with no message left (only reasoning items) with param
// "input".
//
// # Dropped
//
// Reasoning items of the conversation are left out, whoever made them:
// a chat request has no place for earlier reasoning (chat APIs answer
// without it, and some refuse it), and an encrypted one only its
// provider can read. Members of the request that the chat request has no
// equivalent for (include, truncation, metadata, store, max_tool_calls,
// top_logprobs…) stay with the responses handler, which echoes and
// stores them; the chat backend does not see them. The annotations of
// earlier output text and the images of tool outputs are not carried.
//
// # The reply
//
// The chat reply's one choice becomes output items, in order: its
// reasoning (a reasoning item whose summary is the reasoning text), its
// content (a message; an empty one when the reply has no item at all)
// and each tool call (a function_call with the call's id, name and
// arguments). finish_reason length makes the response incomplete with
// reason max_output_tokens, content_filter with content_filter. The
// usage's prompt_tokens are its input_tokens, completion_tokens its
// output_tokens, completion_tokens_details.reasoning_tokens its
// output_tokens_details.reasoning_tokens; the model the backend names
// (chat.Result Model) is the response's model.
//
// A stream is translated delta by delta, as it arrives: reasoning, text
// and tool call fragments continue the open item while they are of its
// kind (and, for a tool call, of its index), and a change of kind begins
// the next item; the finish reason and the usage of each delta are
// passed on at once, so that a client that goes away is charged what the
// chat backend reported. A stream with no output at its end gets the
// empty message of the whole reply. A chat backend that breaks its
// contract in a way the responses format cannot carry (a choice other
// than 0, the fragments of a tool call resumed after another item began)
// fails the request with a 500 internal_server_error whose cause is
// logged; the chat backend's own errors pass through unchanged.
//
// # Compaction
//
// The backend does not compact (it is not a responses.Compactor): a chat
// model has no opaque state to hand back, and a summary written by
// prompting the model is a policy (the prompt, the length, the model)
// that belongs to the embedder, who can add a Compact method by
// wrapping the backend. POST /v1/responses/compact is answered with the
// handler's 400 (param "model", the model does not support compaction),
// and a compaction item in a request's input is refused as above.
package fromchat
