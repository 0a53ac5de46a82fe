// Package errors holds gatewaykit's one API error type and the only code
// that turns an error into its wire form.
//
// Import it as apierrors, the way Kubernetes' api/errors is imported, so it
// does not shadow the standard library:
//
//	import apierrors "github.com/gatewaykit/gatewaykit/errors"
//
// # The error
//
// Handlers, middleware and backends return an [*Error] (or wrap one) to send
// a client-facing error. Its [Code] decides the HTTP status and the error
// type, in one switch that mirrors the tables of the spec (§5.5 and §7):
//
//	400 invalid_request_error   type invalid_request_error
//	401 invalid_api_key         type invalid_request_error
//	401 missing_authorization   type invalid_request_error
//	403 insufficient_quota      type insufficient_quota
//	404 model_not_found         type invalid_request_error
//	404 not_found               type invalid_request_error
//	405 method_not_allowed      type invalid_request_error
//	408 request_timeout         type invalid_request_error
//	429 rate_limit_exceeded     type rate_limit_error
//	500 internal_server_error   type server_error
//	502 bad_gateway             type upstream_error
//	503 service_unavailable     type server_error
//	504 gateway_timeout         type timeout_error
//
// not_found (a task or stored response that does not exist, or a path
// that no route serves), method_not_allowed (a path served for other
// methods, listed in the Allow header), request_timeout (a request body
// that did not arrive in time), service_unavailable (the gateway cannot
// take the request now: a store or rate limiter it needs cannot be
// reached ([Unavailable]), its bound on request bodies in flight is
// reached, or a relay is still waiting for its upstream's model list;
// sent with Retry-After) and gateway_timeout (a context deadline) are the
// project's additions where the spec is silent.
//
// # Dependencies that fail
//
// A store or rate limiter that cannot be reached is an outage, not a
// bug: where a handler or middleware turns such a failure into the
// client's error, it uses [FromDependency] (after the sentinels of the
// dependency's contract, such as a task not found), which answers 503
// service_unavailable with Retry-After ([Unavailable]) in the family's
// shape, logs the cause and never sends it. 500 internal_server_error is
// left for what is a bug: a backend's answer that cannot be sent, an
// error that says nothing of what the client is to be told.
//
// Each family of paths has its shape ([ShapeFor]): the messages format
// and the Gemini-style family answer in their own, everything else in
// the general one.
//
// # Wire shapes
//
// [Renderer.Write] renders any error in one of the three shapes of the
// spec ([Shape]), or in the error shape of one of the two other compatible
// formats that the relay's access points serve (spec §4.4):
//
//   - [General]: {"error":{"message","type","param","code"}}, used by every
//     endpoint and by the auth middleware. param is null when no field is at
//     fault; code is always a non-empty string.
//   - [Flat]: the video task-creation shape, {"code","message"}, plus an
//     "error" object carrying the same message and code, because the official
//     SDKs read only "error" and would otherwise show an empty message. On
//     this shape invalid_request_error is spelled invalid_request, as in the
//     spec's example, and every client error but 429 and 403
//     insufficient_quota is sent as a 400 (model_not_found included), as
//     the spec's create paths answer.
//   - [Content]: the content-download shape, {"error":{"message","type"}},
//     plus the code that every other shape carries: {"error":{"message",
//     "type","code"}}.
//   - [Messages]: the messages-format (Anthropic) envelope,
//     {"type":"error","error":{"type","message"}}, its type derived from the
//     HTTP status ([MessagesBodyOf]).
//   - [Google]: Google's error object, {"error":{"code","message","status",
//     "details"}}, with the google.rpc.Code name of the HTTP status and the
//     gateway's code in a google.rpc.ErrorInfo detail ([GoogleBodyOf]).
//
// Every shape keeps the error's HTTP status, except [Flat] as described.
//
// An error that is not an [*Error] renders as 500 internal_server_error with
// the message "internal server error": its text goes to the log, never to
// the client. context.Canceled means the client went away: it is logged at
// debug level and nothing is written. context.DeadlineExceeded renders as
// 504 gateway_timeout.
package errors
