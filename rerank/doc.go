// Package rerank serves POST /v1/rerank (spec §4.4) over any [Backend]:
// the request is decoded and checked here, the relevance scores come from
// the backend, and the handler ranks the documents.
//
//	rerank.Register(mux, rerank.NewHandler(catalog, backend))
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # Request
//
// The form shared by Jina's rerank API and Cohere's v1: model (required,
// a model of the catalogue whose supported_endpoint_types lists
// "rerank", [models.Rerank]); query (required, not empty); documents
// (required, 1 to [MaxDocuments]): strings, or objects with a "text"
// member; top_n (optional): how many results to return, all by default;
// return_documents (optional, true by default): whether each result
// carries its document. Other members (max_chunks_per_doc, rank_fields…)
// are ignored.
//
// # Reply
//
//	{"id":"rerank-…","model":"demo-rerank",
//	 "results":[{"index":1,"relevance_score":0.7071,"document":{"text":"Paris is the capital of France."}},…],
//	 "usage":{"prompt_tokens":28,"total_tokens":28},
//	 "meta":{"billed_units":{"search_units":1}}}
//
// results are the documents ranked by their scores, highest first (equal
// scores keep the request's order), cut to top_n; index is the
// document's position in the request. usage is Jina's, meta Cohere's, so
// that clients of either find what they read.
//
// # Usage and quota
//
// The handler reserves the body's bytes / 4 tokens from the API key
// before it calls the backend, and settles the reservation to the
// backend's [Result].PromptTokens, recorded with the model as input
// tokens; a failed request is charged nothing.
//
// # Errors
//
// A backend error that is (or wraps) an *apierrors.Error is sent as it
// is; any other is a 500 whose cause is only logged, as is a Result that
// cannot be sent (a wrong number of scores, NaN or infinite scores).
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes,
// WithValidator, WithAllowed and WithErrorHook. endpoint.WithKeepAlive and
// WithClock do not compile here (the handler does not stream, and its
// replies carry no time), nor do the options of other packages.
package rerank
