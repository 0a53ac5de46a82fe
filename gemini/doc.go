// Package gemini serves the Gemini-style content generation of spec §4.4,
// POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent, over any chat backend ([chat.Backend]: the demo,
// the relay to an OpenAI-compatible upstream, an embedder's own), so that
// Google's clients (the Gen AI SDKs, or curl) reach every model of the
// catalogue that serves chat completions:
//
//	catalog := models.NewMemoryCatalog(demo.TextModels()...)
//	gemini.Register(mux, gemini.NewHandler(catalog, demo.NewTextBackend().Chat()))
//	server := auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor))(mux)
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// The package gateway mounts it when its config has a chat backend; with
// a relay, the relay's access handler passes the requests for a model
// whose upstreams all speak the Gemini format natively
// (relay.APIGemini) through unchanged, and hands every other to this
// handler (relay.WithFallback).
//
// # A request's way through the handler
//
//  1. The path: [Pattern] takes the rest of the path, and the model and
//     the method are split at its last colon ([Action]; a "models/"
//     prefix is dropped). A method other than generateContent and
//     streamGenerateContent is a 404 NOT_FOUND.
//  2. Decode: the body (at most 8 MiB, endpoint.WithMaxRequestBytes) is
//     one [Request], in lowerCamelCase as Google's clients send it, or in
//     snake_case as Google's REST examples do ([DecodeRequest]).
//     Members that no type models (safetySettings, cachedContent, …) are
//     accepted and ignored. A member given twice, in one spelling or in
//     both, is refused as package endpoint says.
//  3. Translate into a chat request ([ToChat]; see it for each field),
//     which checks the request: every way it can be wrong is a 400
//     INVALID_ARGUMENT whose details name the field. Images are the only
//     media (inline, or by http(s) URL); tools are function declarations
//     only (googleSearch, codeExecution … are refused); candidateCount is
//     1 to 8, maxOutputTokens 1 to 2³¹−1 (endpoint.MaxOutputTokens),
//     stopSequences at most 5.
//  4. Check the model as chat completions do (spec §1): unknown, or not
//     allowed to the key (endpoint.WithAllowed), is a 404 NOT_FOUND; a
//     model without the endpoint type "compat" a 400. (The Gemini-style
//     model list of package models lists generateContent for compat
//     models.)
//  5. Reserve the request's estimate against the API key, as package
//     chat does (the body's bytes / 4, plus candidateCount times
//     maxOutputTokens, else the model's output limit, else 4096); ask the
//     backend; settle to the reply's totalTokenCount (a stream whose
//     backend reported no usage: the estimate of its output, as in chat).
//
// # Replies
//
// generateContent answers one [Response]: a candidate per choice (index,
// content with role "model" and its parts — the reasoning as a thought
// part when generationConfig.thinkingConfig.includeThoughts is set, the
// text, one functionCall per tool call, with the backend's call id or a
// new "call_…" one — and finishReason: STOP for stop and tool calls,
// MAX_TOKENS for length, SAFETY for content_filter), usageMetadata
// (promptTokenCount, candidatesTokenCount, thoughtsTokenCount for the
// reasoning tokens, and totalTokenCount, their sum), modelVersion (the
// model) and a random responseId. Members are camelCase only: Google's Go
// client drops snake_case ones.
//
// streamGenerateContent streams [Response] events: text (and thoughts)
// as the backend produces them, one event per delta; a function call
// whole, in the event that ends its candidate (Gemini does not stream
// arguments); the event that ends a candidate holds its finishReason, and
// the last event the usageMetadata. Every event names the model and the
// same responseId; none carries a continuationToken (a client would ask
// again). Two forms:
//
//   - With ?alt=sse (what Google's SDKs ask for): Content-Type
//     text/event-stream, one "data: <json>" line per event followed by a
//     blank line (the last event too), no "event:" line, no id, no
//     [DONE]. Google's Go client takes any other line for an invalid
//     chunk, so silences are bridged with an empty block (a blank line
//     pair), never an SSE comment.
//   - Without it: one JSON array, Content-Type application/json, whose
//     elements are the events, written as they come and separated by
//     ",\r\n" as Google's API does; silences are bridged with line breaks
//     (JSON whitespace).
//
// The events are written as chat's chunks are: in the request's
// goroutine, as the backend's stream yields them, flushed after every
// delta unless the stream calls chat.Params.Flush (a relay's, before each
// read of its upstream's reply; a reply that is all at hand, first), then
// at those calls and at the end. The handler passes its flush to the
// backend with chat.Params.SetFlush. Keep-alives follow
// endpoint.WithKeepAlive (15 seconds by default).
//
// # Errors
//
// Every error is Google's error object,
// {"error":{"code","message","status","details"}} (apierrors.GoogleBodyOf:
// code is the HTTP status, status its google.rpc.Code name, details one
// ErrorInfo with the gateway's code and the field at fault). Until the
// first event of a stream, the error is the reply, with its real status
// and headers (Retry-After); after it, the stream ends with one more
// event, the error object (the last element of the array form, which
// stays valid JSON), which Google's Go client returns as an APIError.
// Credentials go through auth.Middleware, which reads x-goog-api-key and
// ?key= as well as Authorization: Bearer.
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes, WithAllowed,
// WithKeepAlive and WithErrorHook. endpoint.WithValidator and WithClock do
// not compile here (the request is checked by its translation, and replies
// carry no time), nor do the options of other packages.
package gemini
