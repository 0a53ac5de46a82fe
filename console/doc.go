// Package console serves gatewaykit's browser console: a page, and the
// files behind it, from which a person tries the gateway with an API key.
// It is plain HTML, CSS and JavaScript modules embedded in the binary
// (go:embed): no build step, and nothing fetched from elsewhere at run time,
// so it works offline. The page talks only to the gateway's public API, on
// its own origin, and to the admin API when one is configured; it is also a
// living example of both.
//
// # Mounting
//
// [NewHandler] returns the handler; [Register] mounts it at [PatternIndex]
// (the page, GET /) and [PatternAssets] (its files, GET /console/…), the
// routes of [Routes], which any other router can mount (see package
// route). Mount
// it on a mux in front of the gateway, so that every other path, /v1/… among
// them, still reaches the gateway and its JSON errors:
//
//	mux := http.NewServeMux()
//	console.Register(mux, console.NewHandler(console.Config{AdminURL: "http://127.0.0.1:8090"}))
//	mux.Handle("/", gw) // the gateway: the API, and its JSON 404 for the rest
//
// The page refers to its files relative to itself (console/app.js), so it
// can also sit under a prefix with http.StripPrefix. Every answer carries a
// Content-Security-Policy that lets the page load only its own files and
// connect only to its origin and the admin URL, Cache-Control no-cache and
// an ETag, so that a browser revalidates each file (304) rather than keep a
// stale one after an upgrade.
//
// # What a person can do
//
//   - Key and models: enter an API key, kept in the tab's sessionStorage
//     (never a cookie), and see the models it may use (GET /v1/models)
//     with their endpoint types and capabilities. A #key=… fragment fills
//     the key in when the page loads and is removed from the address bar
//     at once; it replaces a key already set in the tab only when the
//     person says so (the page shows its last four characters and asks),
//     and one that appears in the fragment later (a page that opened the
//     console can change it) is not read at all.
//   - Chat: POST /v1/chat/completions streamed token by token, with a Stop
//     button that aborts the request, the usage of the last chunk
//     (stream_options.include_usage), a reasoning model's
//     reasoning_content shown apart, and errors as the API words them.
//     Each piece is appended to the text shown and the log scrolls once a
//     frame, so that a reply of hundreds of thousands of characters (even
//     without a space, which breaks where it would overflow) leaves the
//     page, and Stop, responsive. Texts, model ids and errors are shown
//     as text, never as HTML.
//   - Conversations: POST /v1/responses streamed as typed events, each
//     turn continuing the last with previous_response_id, the response ids
//     shown. With the Background box ticked, a turn is created with
//     "background": true, "stream": true and "store": true, and shows its
//     status as it goes (queued, in_progress, then completed, cancelled,
//     failed or incomplete) and the sequence_number of the last event
//     seen. Its Cancel button posts POST /v1/responses/{id}/cancel: the
//     turn ends cancelled with the text written so far (the stream's end,
//     or the cancel's answer when the page was detached). Stop only
//     detaches the page from the stream, and a stream that drops (or ends
//     before its run does) leaves the turn detached too: the run goes on,
//     Resume reattaches with GET
//     /v1/responses/{id}?stream=true&starting_after=N (N the last sequence
//     number seen), so that each event is appended once, and Poll shows
//     the stored status (GET /v1/responses/{id}). A cancelled or failed
//     turn is not continued from; a turn that completes after a resume is,
//     when it is still the last one. The example server's demo answers
//     background requests slowly (-background-delay, 200 ms a token) so
//     that all of this can be watched.
//   - Video studio: create tasks on POST /v1/videos (JSON or
//     multipart/form-data) or POST /v1/vendorai/videos, with controls that
//     follow the model's capabilities from the model list (seconds, sizes;
//     modes, resolutions, aspect ratios and the assets of each mode); a
//     progress bar while GET /v1/videos/{id} is polled; then the video and
//     its thumbnail, fetched from GET /v1/videos/{id}/content with the key
//     and shown from object URLs; the earlier tasks (GET /v1/videos), to
//     show, download or delete. Object URLs are made only of content of
//     a type a video or thumbnail may have (video/mp4, video/webm,
//     image/png, image/jpeg, image/webp): anything else (the
//     application/octet-stream that the gateway sends for an upstream's
//     page) is refused with a message, since an object URL of it would
//     run on the page's origin, where the keys are. Content replies are
//     Cache-Control: private, no-cache, so once the key is forgotten the
//     browser's cache gives them to no request without it.
//   - Admin, when [Config].AdminURL is set: an admin key (sessionStorage),
//     keys created (the secret shown once), disabled, enabled and revoked,
//     and usage and cost per day and per model drawn as SVG charts, with
//     the numbers as tables. The admin API must answer CORS preflights,
//     since the page is on another origin.
//
// The page is accessible (labels on every control, keyboard use with the
// tabs' arrow keys, visible focus, alerts for errors) and fits a narrow
// screen.
package console
