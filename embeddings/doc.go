// Package embeddings serves POST /v1/embeddings (spec §4.4) over any
// [Backend]: the request is decoded and checked here, the vectors come
// from the backend, and the reply is OpenAI's list object.
//
//	embeddings.Register(mux, embeddings.NewHandler(catalog, backend,
//		endpoint.WithLogger(logger)))
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # Request
//
// model (required, a model of the catalogue whose
// supported_endpoint_types lists "embeddings", [models.Embeddings]);
// input (required): a string, an array of strings, an array of token ids
// or an array of arrays of token ids — at most [MaxInputs] items, none
// empty; dimensions (optional, 1 to [MaxDimensions]): the length of every
// vector; encoding_format (optional): "float" (the default) or "base64";
// user (optional). Other members are ignored. Bad input is a 400
// invalid_request_error naming the field; the body limit is that of
// endpoint.WithMaxRequestBytes (8 MiB by default).
//
// # Reply
//
//	{"object":"list",
//	 "data":[{"object":"embedding","index":0,"embedding":[0.0123,-0.0456,…]}],
//	 "model":"demo-embedding",
//	 "usage":{"prompt_tokens":2,"total_tokens":2}}
//
// With encoding_format "base64", each embedding is a string: the standard
// base64 of the vector's float32 values, little-endian, as OpenAI sends
// them and the official SDKs decode them. Floats are written in the
// shortest form that reads back as the same float32.
//
// # Usage and quota
//
// The handler reserves the body's bytes / 4 tokens from the API key
// before it calls the backend (403 insufficient_quota when all of the
// key's quota is reserved by requests in flight), and settles the
// reservation to the backend's [Result].PromptTokens, recorded with the
// model as input tokens; a failed request is charged nothing.
//
// # Errors
//
// A backend error that is (or wraps) an *apierrors.Error is sent as it
// is; any other is a 500 whose cause is only logged. A Result that cannot
// be sent (a wrong number of vectors, a vector of the wrong length, NaN or
// infinite values) is a 500 too.
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes,
// WithValidator, WithAllowed and WithErrorHook. endpoint.WithKeepAlive and
// WithClock do not compile here (the handler does not stream, and its
// replies carry no time), nor do the options of other packages.
package embeddings
