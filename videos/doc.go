// Package videos implements the asynchronous video tasks of the gateway API
// (spec §2.5, §3.1, §4.5–§4.9): two create paths, status polling, content
// download, list and delete; the [Task] and its state machine; the
// [TaskStore] that keeps tasks, the runner (package videos/runner) that generates them through a
// [Generator], and the [ContentStore] that keeps the results.
//
// # Mounting
//
// One handler serves every route, routing them with a ServeMux of its
// own (under a prefix, mount it through http.StripPrefix). The content
// route accepts an
// admin-console session as well as an API key, so it usually sits behind
// its own auth middleware:
//
//	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
//	r := runner.New(store, generator, contents, runner.WithKeyStore(keyStore))
//	h := videos.NewHandler(store, catalog, contents, videos.WithNotify(r.Wake))
//
//	keys := auth.Middleware(keyStore)
//	keysOrSession := auth.Middleware(keyStore, auth.WithSessionAuthenticator(sessions))
//	for _, p := range videos.Patterns() {
//		mux.Handle(p, keys(h))
//	}
//	mux.Handle(videos.PatternContent, keysOrSession(h))
//
// (With one middleware for all, [Register] mounts them on a ServeMux; on
// any other router, mount the routes of [Routes], see package route.)
//
//	go r.Run(ctx)
//	defer r.Shutdown(shutdownCtx)
//
// The routes:
//
//	POST   /v1/videos                        create (JSON or multipart/form-data)
//	POST   /v1/vendorai/videos               create, multimodal path (JSON)
//	POST   /v1/vendor/videos                 the same (the spelling of the spec's samples)
//	GET    /v1/videos                        the caller's tasks, newest first
//	GET    /v1/videos/{task_id}              status
//	DELETE /v1/videos/{task_id}              delete the task and its content
//	GET    /v1/videos/{task_id}/content      download (?variant=video|thumbnail; HEAD too)
//
// # Owners
//
// Tasks are scoped by an owner taken from the request ([WithOwner], an
// auth.OwnerFunc, the same policy as the stored responses of package
// responses). By default (auth.AccountOwner) it is the account of the
// principal that auth.Middleware authenticated, so every key of an
// account, and an admin-console session of that account, share its
// tasks; auth.KeyOwner scopes them by key instead. A task of another
// owner is answered 404, exactly as one that does not exist. Requests
// with no principal (a handler not behind auth.Middleware) share the
// owner auth.AnonymousOwner; an OwnerFunc that refuses a request makes it
// a 401 missing_authorization in the general error shape.
//
// # Creating tasks
//
// POST /v1/videos takes model, prompt, size, seconds and input_reference
// as a JSON object or as multipart/form-data, which is what the official
// OpenAI SDKs send: text fields, input_reference as a file part, or as
// input_reference[image_url] (a URL or a data URI). model and prompt are
// required (the spec leaves it open; OpenAI requires both). The prompt is
// at most the model's limit, 2500 characters by default, counted in
// Unicode characters, not bytes. size must be "<width>x<height>", one of
// the model's sizes if it lists them, and is required if the model says
// so. seconds may be a number or a string; it must be a whole positive
// number, one of the model's list if it has one (4, 8, 12, 16 and 20 for
// models "of the first kind"). When size or seconds is absent the model's
// default is recorded, if any. A data URI or an uploaded file must sniff
// as a PNG, JPEG or WebP image, no larger than [WithMaxImageBytes] (10 MiB
// by default); uploaded files are kept as data URIs. Fields the request
// types do not model are kept (Extra) for the generator.
//
// POST /v1/vendorai/videos takes model, mode, prompt, assets ({role, url}),
// resolution (720p or 1080p), duration_sec, aspect_ratio ("<w>:<h>") and
// the pass-through options prompt_optimize, gen_tier, quality, audio_mode,
// camera_control, shot_type and hd_upscale, which are kept unchecked for
// the generator. The mode must be one the model enables. Assets by mode,
// with the prompt rule this package decided where the spec says only
// "required in most modes":
//
//	mode              assets                                        prompt
//	t2v               none                                          required
//	i2v               one image                                     optional
//	first_frame       one first_frame                               optional
//	first_last_frame  one first_frame and one last_frame            optional
//	ref_image         one or more reference_images                  required
//	video_extend      one source_video                              optional
//	video_edit        one source_video, any reference_images        required
//
// The prompt is optional where an image or a video already says what to
// make, and required where nothing else does (t2v), where the inputs are
// only references (ref_image), or where it is the edit to make
// (video_edit). An asset of a role the mode does not use is refused. The
// task's size comes from the resolution (the short side: 720 or 1080
// pixels) and the aspect ratio (16:9 by default), or the model's default
// size when neither is given; its seconds from duration_sec, which must be
// one of the model's seconds if it lists them.
//
// Every creation failure is a 400 (but a 429 or a 5xx, from the store or
// a [Submitter], which keep their status) with the flat body of the spec
// plus the mirrored "error" object of docs/design.md, so the official
// SDKs show the message: {"code":"invalid_request","message":"…","error":{"message":"…",
// "type":"invalid_request_error","param":"seconds","code":"invalid_request"}}
// (code model_not_found for an unknown model). Success is a 200 with
// {id, status: "queued", progress: 0, created_at}; ids are "task_" and 26
// base32 characters (130 random bits).
//
// # Work that starts before the reply
//
// A [Generator] that hands the work to another service (an upstream, as
// the relay's does) can also be a [Submitter]. Given to the handler with
// [WithSubmitter], it is called with each validated task before the task
// is stored and the client answered: what it refuses is refused to the
// client at once, in the flat shape (its *apierrors.Error's message and
// code; status 400, or its own for 429 and 5xx), and no task is stored;
// the reference it returns (an upstream's task id) is stored as
// [Task.BackendRef], never sent to clients, and the Generator finds the
// work by it whichever runner claims the task, after a restart or on
// another replica, instead of starting it again.
//
// # Quota
//
// Video tasks are charged to the API key that creates them, per second of
// video and per model ([WithPricing]; [DefaultPricePerSecond], 1000 units
// of the keys' quota a second, by default): a task costs its duration in
// seconds, rounded up, times its model's price; a task whose request and
// model name no duration is charged for the longest the model allows, or
// 10 seconds. The create routes reserve that cost against the caller's
// key (auth.Reserve) before storing the task; when all of the key's quota
// is already reserved by requests and tasks in flight they answer 403
// insufficient_quota in the flat shape (the one status besides 429 that
// the flat shape keeps, as the auth middleware answers quota with 403).
// The reservation is kept in [Task.Charge]. The runner (package videos/runner), given the key
// store with runner.WithKeyStore, charges it when the task completes and
// releases it when the task fails; DELETE of a task that has not finished
// releases it (through the key store of auth.Middleware). A task is
// charged what was reserved for it, whatever the generator's result.
//
// Two cases are not settled: a task that a Claim fails because its lease
// ran out too often keeps its reservation (no runner sees it fail), and a
// deletion that races with the task's completion may release a
// reservation that the runner has just charged (the key's Reserved is
// then too low by the task's cost until its other reservations settle).
// A request not behind auth.Middleware is not charged.
//
// # Status, list and delete
//
// GET /v1/videos/{task_id} answers the task as spec §2.5 and §4.6 have it
// ([Video]): a queued or running task carries id, object "video", model,
// status, progress, created_at, seconds and size; a completed one adds
// completed_at, "error": null and metadata (url, thumbnail_url, duration,
// width, height, fps, seed), with expires_at and remixed_from_video_id when
// set; a failed one has completed_at and error {message, code} and is
// still a 200. The status is only ever queued, in_progress, completed or
// failed. metadata.url is the content endpoint's URL unless the result
// lives at a URL of its own: under the public base URL set with
// [WithPublicURL], or else the path "/v1/videos/{task_id}/content",
// relative to the client's origin (the path as the request reached the
// handler, so a prefix the router kept stays). It is never built from the
// request's Host header, which the client controls. Running
// tasks are answered with the header openai-poll-after-ms (3000 by
// default, [WithPollAfter]), which the SDKs' pollers follow.
//
// GET /v1/videos lists the caller's tasks newest first (order=asc for the
// other way), limit 1 to 100 (20 by default) after the task id after, as
// {"object":"list","data":[…],"first_id","last_id","has_more"}, the page
// shape the official SDKs iterate. DELETE removes a task in any state and
// its content, and answers {"id","object":"video.deleted","deleted":true};
// a runner generating it stops at its next progress report.
//
// These routes answer errors in the content-download shape
// {"error":{"message","type","code"}}: 404 not_found for an unknown task,
// 400 for a bad limit, order or after.
//
// # Content
//
// GET (and HEAD) /v1/videos/{task_id}/content?variant=video|thumbnail
// (absent or empty means video) follows the table of spec §4.7, its
// errors in the content-download shape with a code added:
//
//	result in a store that serves bytes      200, Content-Type video/mp4 or image/png|jpeg,
//	                                         Content-Length, Content-Disposition attachment
//	                                         with a file name, through http.ServeContent
//	                                         (Range → 206, If-None-Match → 304, HEAD)
//	result at a URL (object storage, CDN)    301 with Location and no body
//	                                         (Cache-Control: no-store, for signed URLs)
//	task not completed                       400, the message names the status
//	variant neither video nor thumbnail,     400, the message names the values
//	or given more than once
//	task unknown, or another owner's         404
//	thumbnail unavailable                    404
//	Range outside the content                416 range_not_satisfiable, Content-Range bytes */SIZE
//	If-Match or If-Unmodified-Since fails    412 precondition_failed
//	result URL not an absolute http(s) URL   502 bad_gateway (never redirected to, never fetched)
//
// Bytes come with headers that no store, generator or origin can make a
// browser run as a page on the gateway's origin (where a console may keep
// keys): Content-Type is the media type stored if a video or thumbnail may
// have it (video/mp4, video/webm, image/png, image/jpeg, image/webp), and
// else application/octet-stream (the Content-Disposition is attachment in
// any case); X-Content-Type-Options: nosniff; Content-Security-Policy:
// sandbox. They carry Cache-Control: private, no-cache (with an ETag or
// Last-Modified): a browser may keep the bytes, but asks the gateway
// before each reuse, with the credentials of that request, so that a key
// forgotten (or another account's) never reads them from its cache, and
// a revalidation that may read them costs a 304. Shared caches keep
// nothing. This is chosen over a max-age with Vary on the credential: a
// credential comes in five places (Authorization, x-api-key,
// x-goog-api-key, ?key=, a console session's cookie), and a copy kept
// under one would still be served without asking the gateway, after the
// key was revoked or the task deleted.
//
// Content stores: [MemoryContentStore] and [FileStore] serve the bytes;
// [URLStore] writes files that another server publishes and hands out
// their URLs. A [Generator] may also return a URL instead of bytes (an
// upstream's CDN); the task then records it as metadata.url.
//
// Redirect or stream: the official OpenAI Go SDK (v3.53 and later)
// refuses to follow a redirect to another origin, so Videos.DownloadContent
// fails against a 301 to object storage on another host (a same-origin
// redirect is followed). [WithContentProxy] makes the gateway fetch such
// content and stream it instead, passing Range and conditional requests
// through: it works with every client, at the cost of the gateway's
// bandwidth and one connection per download, where a redirect costs the
// gateway nothing and lets the CDN serve the bytes. Streamed content gets
// the headers above whatever the origin sent (its Content-Type checked as
// a stored one is), and an origin's 416 or 412 comes in the content shape.
//
// # Store and lease policy
//
// A [TaskStore] has six methods: Create, Get (scoped to an owner), Claim
// (the next task for a worker), Update (progress, lease renewal, and the
// outcome: completed, failed, or released), List and Delete. Progress
// stays in 0–100 and never decreases; completed and failed are final. A
// claim comes with a lease (1 minute by default) that the runner renews
// at each progress report and every third of the lease; a worker is
// identified by the claim's attempt number. A task whose lease runs out is
// handed to the next claimer, oldest first and before queued tasks, with
// its progress kept, until it has been claimed MaxAttempts times (3 by
// default); then the next Claim fails it with code generation_failed. A
// runner that shuts down releases its tasks, which are claimable at once
// without counting the attempt. A store keeps every field of a [Task],
// BackendRef included, so that a task taken over finds its submitted
// work. Times come from the callers, so the
// policy is tested without sleeping. [MemoryStore] implements it;
// videostest.TestTaskStore is the conformance suite for any other.
//
// # Limits
//
// What one client can make the gateway hold is bounded; each bound has a
// default and an option:
//
//	create body, JSON or multipart        32 MiB          WithMaxRequestBytes
//	one reference image (decoded)         10 MiB          WithMaxImageBytes
//	unmodelled fields a task keeps        64 KiB in all   WithMaxExtraBytes
//	fields of a multipart form            32              WithMaxFormFields
//	one text field of a multipart form    64 KiB          (fixed)
//
// Unmodelled fields are the members (or form fields) that the request
// types do not model, on every level ("metadata", "user", an asset's
// extra members…): a task keeps them for the [Generator], so they count
// against one budget, their names and JSON values together. Every excess
// is a 400 in the flat shape saying which limit was passed; nothing is
// stored.
//
// The in-memory stores evict, with bounds set by [MemoryStoreOptions] and
// [MemoryContentStoreOptions]: [MemoryStore] drops finished tasks (never
// a queued or running one) 24 hours after they finished, and the earliest
// finished first while it holds more than 10 000 tasks or 1 GiB of
// requests; [MemoryContentStore] drops a task's video and thumbnail 24
// hours after they were put, and the least recently put first above
// 10 000 tasks or 1 GiB. A task whose content was evicted still reads
// completed; its download answers 404.
//
// The time a client may take to send its body, and the bytes of bodies
// in flight across all requests, are bounded in front of the handler:
// gateway.LimitBodies, which gateway.New mounts.
//
// # Runner
//
// The tasks are made by a runner of package videos/runner (gateway.New
// runs one). It claims tasks, at most runner.WithWorkers at once (4 by
// default),
// calls the [Generator] with a progress callback, puts the result in the
// ContentStore, and records completed or failed. A generator's error
// fails the task with the code and message of a [*Failure], or
// generation_failed and a generic message (the error itself is only
// logged). A generation that outlives runner.WithGenerationTimeout (1 hour)
// fails; a panicking generator fails its task, not the runner. A task's
// [Task.Charge] is settled against the key store of runner.WithKeyStore when
// it completes or fails (see Quota above). Shutdown
// stops claiming and waits for running tasks; past its deadline it
// cancels and releases them. Several runners, in several processes, may
// share one store.
package videos
