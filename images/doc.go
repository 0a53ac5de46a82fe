// Package images serves POST /v1/images/generations (spec §4.4) over any
// [Backend], and the image files of its url replies: the request is
// decoded and checked here, the images come from the backend.
//
//	images.Register(mux, images.NewHandler(catalog, backend,
//		images.WithPublicURL("https://api.example.com"), images.WithURLKey(key)))
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # Request
//
// model (required, a model of the catalogue whose
// supported_endpoint_types lists "image-generation",
// [models.ImageGeneration]); prompt (required, at most [MaxPromptChars]
// characters); n (1 to [MaxImages], default 1); size ("auto" or
// "<width>x<height>"); response_format ("url", the default, or
// "b64_json"); output_format ("png", "jpeg" or "webp"); output_compression
// (0-100); quality, style, background, moderation and user are passed to
// the backend. The handler checks the form of each; the backend decides
// which values it draws (a size it cannot draw is its 400).
//
// # Reply
//
//	{"created":1767323045,
//	 "data":[{"url":"/v1/images/files/…png","revised_prompt":"…"}],
//	 "output_format":"png","quality":"hd","size":"1024x1024",
//	 "usage":{"input_tokens":5,"output_tokens":256,"total_tokens":261,
//	          "input_tokens_details":{"text_tokens":5,"image_tokens":0}}}
//
// With response_format b64_json each item carries b64_json, the image
// file in standard base64, instead of url. output_format, quality,
// background and size are sent as the backend describes its images;
// usage when the backend reports one.
//
// # Image URLs
//
// A backend that stores its images gives their URLs ([Image].URL), sent
// as they are. Otherwise the handler serves them itself, without storing
// anything: for a backend that is a [Redrawer] (the demo's is), the URL
// is GET /v1/images/files/{name} ([PatternFile]), whose name encodes the
// request that drew the image (deflated JSON), the image's index and an
// expiry one hour ahead ([URLLifetime]), signed with HMAC-SHA256
// ([WithURLKey]). A GET of it checks the signature and the expiry (404
// not_found for a name that is forged, malformed or expired), checks the
// model against the catalogue and the caller's key as a generation does,
// and answers with the image that Redraw draws again: the same bytes,
// with their Content-Type (image/png, image/jpeg, image/webp or
// image/gif; any other type, such as image/svg+xml, is sent as
// application/octet-stream with Content-Disposition: attachment, so that
// a backend's image never runs as a page on the gateway's origin),
// X-Content-Type-Options: nosniff, Content-Security-Policy: sandbox and
// Cache-Control: private, max-age=3600. The
// route sits behind the same authentication as the rest of the API: the
// client fetches the URL with its API key, as it fetches video content;
// the signature makes sure that only images the gateway generated (and
// charged) are drawn, and only for an hour. The URLs are paths relative to
// the gateway's origin unless [WithPublicURL] sets an absolute base. A
// backend that is neither must answer url requests with URLs of its own,
// or the reply is a 500. The name is signed, not encrypted: anyone who
// sees the URL can read the prompt from it, as from the request. Its
// length grows with the prompt's (deflated); a URL of a very long prompt
// (tens of kilobytes) may exceed the request-header limit of the server
// or of proxies in front of it, and such clients are better served by
// b64_json.
//
// # Usage and quota
//
// The handler reserves the body's bytes / 4 tokens plus 1024 per image
// from the API key before it calls the backend, and settles the
// reservation to the backend's [Usage] (input and output tokens, recorded
// with the model), or to the prompt's bytes / 4 when it reports none. A
// failed request is charged nothing; fetching a file is not charged.
//
// # Errors
//
// A backend error that is (or wraps) an *apierrors.Error is sent as it
// is; any other is a 500 whose cause is only logged, as is a Result that
// cannot be sent (a wrong number of images, an image without the Data or
// URL that the response format needs).
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes,
// WithValidator, WithAllowed, WithErrorHook and WithClock (replies'
// created, and the expiry of the image URLs); and this package's own,
// [WithURLKey] and [WithPublicURL], which no other package takes.
// endpoint.WithKeepAlive does not compile here (the handler does not
// stream), nor do the options of other packages.
package images
