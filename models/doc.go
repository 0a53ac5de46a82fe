// Package models is gatewaykit's model catalogue: the [Model] type, the
// [Catalog] interface with its in-memory implementation, the model
// prerequisite check [Require] that every generation handler runs, and the
// handler of GET /v1/models in its three formats.
//
// # The catalogue
//
// A [Model] has an id, an owner, a creation time, the endpoint types it
// serves ([Compat], [CompatResponse], [CompatVideo] from the spec; and
// gatewaykit's own types of the other access points, which the spec does
// not name: [Embeddings] "embeddings", [Moderation] "moderation", [Rerank]
// "rerank", [ImageGeneration] "image-generation", [AudioSpeech]
// "audio-speech" and [AudioTranscription] "audio-transcription", checked
// by the handlers of packages embeddings, moderations, rerank, images and
// audio), optional display data, a reasoning flag and, for video models,
// [VideoCapabilities].
// A [Catalog] is two context-first methods, Get and List; Get returns an
// error wrapping [ErrNotFound] for an unknown id. [NewMemoryCatalog] keeps
// the models in memory, in the order given, and is safe for concurrent use.
// The conformance suite modelstest.TestCatalog checks any implementation.
//
// # Configuration form
//
// A model list in JSON is an array of objects with the keys below.
// [ParseModels] decodes it strictly (unknown keys are errors) and validates
// it; a configuration file that embeds the list in a larger document can
// decode []Model itself and call [ValidateModels].
//
//	[
//	  {
//	    "id": "gpt-4o-mini",                        // required
//	    "supported_endpoint_types": ["compat", "compat-response"], // required, at least one
//	    "owned_by": "openai",                       // default ""
//	    "created": 1721172741,                      // Unix seconds, default 0
//	    "display_name": "GPT-4o mini",              // default: the id
//	    "description": "Small, fast model",         // default ""
//	    "version": "2024-07-18",                    // Gemini-style version, default "1"
//	    "input_token_limit": 128000,                // default 0: unknown, not sent
//	    "output_token_limit": 16384,                // default 0: unknown, not sent
//	    "reasoning": false,                         // replies carry reasoning_content
//	    "pricing": {                                // US dollars; default: free
//	      "input_per_million": 0.15,                // per million input tokens
//	      "output_per_million": 0.6,                // per million output tokens
//	      "cached_input_per_million": 0.075,        // read from the prompt cache; default: input's
//	      "cache_write_per_million": 0.15,          // written to the prompt cache; default: input's
//	      "reasoning_per_million": 0.6              // reasoning tokens; default: output's
//	    }
//	  },
//	  {
//	    "id": "vendor-video-1",
//	    "supported_endpoint_types": ["compat-video"],
//	    "video": {                                  // only with compat-video
//	      "modes": ["t2v", "i2v", "first_last_frame"], // multimodal path; default all
//	      "seconds": [4, 8, 12, 16, 20],            // default any positive duration
//	      "default_seconds": 8,                     // default: left to the generator
//	      "sizes": ["1280x720", "720x1280"],        // <width>x<height>, default any
//	      "size_required": true,                    // default false
//	      "default_size": "1280x720",               // default: left to the generator
//	      "resolutions": ["720p", "1080p"],         // default both
//	      "max_prompt_chars": 2500                  // default 2500 (DefaultPromptLimit)
//	    },
//	    "pricing": {"per_second": 0.1}              // US dollars a second of video
//	  }
//	]
//
// (The comments are for this page only: JSON has none.) In the video
// capabilities, an empty or absent list means no restriction. The video
// modes are t2v, i2v, first_frame, first_last_frame, ref_image,
// video_extend and video_edit; models "of the first kind" of the spec allow
// the seconds 4, 8, 12, 16 and 20 ([FirstKindSeconds]).
//
// A model's [Pricing] gives the cost of each request in US dollars (its
// input and output tokens at the prices per million; a video task's
// seconds at per_second), which the handlers record against the API key
// with the usage (auth.SettleParams.CostUSD): it feeds the keys' usage
// rows and their budgets in money (auth.Quota.BudgetUSD). Prices must
// not be negative. Pricing is configuration only: GET /v1/models never
// sends it.
//
// # The prerequisite check
//
// A generation handler calls [Require] with the model id of the request and
// the endpoint type it needs (spec §1). The errors, rendered by apierrors
// in the endpoint's shape:
//
//	empty model                      400 invalid_request_error  param "model"  "model is required"
//	unknown, or rejected by allow    404 model_not_found        param "model"
//	endpoint type not listed         400 invalid_request_error  param "model"  names the missing type
//	catalogue failure                500 internal_server_error  (cause logged, not sent)
//
// An [AllowFunc] decides which models a caller may use. It receives the
// request context, so an embedder builds it from the principal that the
// auth middleware put there; this package does not import the auth
// package. Pass the same AllowFunc to [Require] and to [WithAllowed], so
// that what a caller sees listed is what it may use.
//
// # GET /v1/models
//
// [NewHandler] serves four routes: [Pattern] and [PatternModel] (/v1),
// [PatternBeta] and [PatternBetaModel] (/v1beta), all of [Patterns].
// Mount them all with [Register] (on any other router, the routes of
// [Routes]; see package route):
//
//	mux := http.NewServeMux()
//	models.Register(mux, models.NewHandler(catalog, models.WithAllowed(allow)))
//
// On the /v1 routes the request's credentials choose the format
// ([FormatOf]), in this order:
//
//  1. headers x-api-key and anthropic-version both present: the
//     messages-format (Anthropic) list, {"data":[{"type":"model","id",
//     "display_name","created_at"}],"has_more","first_id","last_id"}, with
//     created_at in RFC 3339, and max_input_tokens and max_tokens when the
//     model's token limits are set;
//  2. header x-goog-api-key or query parameter key present: the
//     Gemini-style list, {"models":[{"name":"models/<id>","baseModelId",
//     "version","displayName","description","inputTokenLimit",
//     "outputTokenLimit","supportedGenerationMethods","thinking"}],
//     "nextPageToken"};
//  3. otherwise the OpenAI list, {"object":"list","data":[{"id",
//     "object":"model","created","owned_by","supported_endpoint_types"}]},
//     plus two additions of gatewaykit: "reasoning": true for a reasoning
//     model, and "video", the video capabilities in the configuration
//     form above, for a video model that sets them (both left out
//     otherwise), so that clients can shape their requests.
//
// The /v1beta routes always answer in the Gemini style, whatever the
// credentials: /v1beta is the Gemini API's prefix (spec §9), so its callers
// are Gemini clients, and one that authenticates with a bearer token still
// gets the shape it parses. The
// single-model routes answer one model object in the same format as the
// list would (the OpenAI object, the messages-format object, or the
// "models/<id>" object), or 404 model_not_found.
//
// Only compat models list generation methods in the Gemini style
// (generateContent and streamGenerateContent); others show an empty list.
//
// Pagination follows each vendor's reference. The OpenAI list is never
// paginated. The messages-format list takes limit (1 to 1000, default 20)
// and after_id or before_id, and sets has_more, first_id and last_id (null
// on an empty page). The Gemini-style list takes pageSize (default 50, at
// most 1000; 0 means the default) and pageToken, and sends nextPageToken
// while models remain. A bad value of any of these is a 400
// invalid_request_error naming the parameter. Every format keeps the
// catalogue's order, and leaves out the models that the [WithAllowed] check
// rejects.
//
// Errors come in the shape of the path's family (apierrors.ShapeFor), as
// the auth middleware's do: Google's error object,
// {"error":{"code","message","status","details"}}, on the /v1beta routes,
// and the general shape of apierrors,
// {"error":{"message","type","param","code"}}, on the /v1 routes, whatever
// format the credentials choose there.
package models
