// Package moderations serves POST /v1/moderations (spec §4.4) over any
// [Backend]: the request is decoded and checked here, the verdicts come
// from the backend, and the reply is OpenAI's moderation object.
//
//	moderations.Register(mux, moderations.NewHandler(catalog, backend))
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # Request
//
// model (required: unlike OpenAI's API, which defaults to its own model,
// the handler has no default; a model of the catalogue whose
// supported_endpoint_types lists "moderation", [models.Moderation]);
// input (required): a string, an array of strings (one result each), or
// an array of parts {"type":"text","text"} and
// {"type":"image_url","image_url":{"url"}} (one result for all of them;
// the URL must be http(s) or a data URI of an image). Other members are
// ignored. Bad input is a 400 invalid_request_error naming the field.
//
// # Reply
//
//	{"id":"modr-…","model":"demo-moderation","results":[{
//	  "flagged":true,
//	  "categories":{"harassment":true,"harassment/threatening":true,"hate":false,…},
//	  "category_scores":{"harassment":0.9,"harassment/threatening":0.97,…},
//	  "category_applied_input_types":{"harassment":["text"],…,"violence":["text","image"],…}}]}
//
// Every result carries every category of [Categories], in that order, in
// each of its three objects (the official SDKs require them all),
// including the slash-named ones. A category the backend did not flag is
// false, one it did not score scores 0. category_applied_input_types
// lists "text" for every category when the input has text, and "image"
// for the categories of [ImageCategories] when it has an image (as
// OpenAI's omni-moderation models do). flagged is true when any category
// is.
//
// # Usage and quota
//
// The handler reserves the body's bytes / 4 tokens from the API key
// before it calls the backend, and settles the reservation to the
// backend's [Result].InputTokens, recorded with the model; the reply
// carries no usage, as OpenAI's does not. A failed request is charged
// nothing.
//
// # Errors
//
// A backend error that is (or wraps) an *apierrors.Error is sent as it
// is; any other is a 500 whose cause is only logged, as is a Result that
// cannot be sent (a wrong number of results, an unknown category, a score
// outside [0, 1]).
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes,
// WithValidator, WithAllowed and WithErrorHook. endpoint.WithKeepAlive and
// WithClock do not compile here (the handler does not stream, and its
// replies carry no time), nor do the options of other packages.
package moderations
