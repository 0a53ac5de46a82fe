package relay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/sse"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes of [NewAccessHandler], in net/http.ServeMux syntax: the
// pass-through access points of spec §4.4. [RegisterAccess] registers them
// all.
const (
	PatternEmbeddings     = "POST /v1/embeddings"
	PatternImages         = "POST /v1/images/generations"
	PatternTranscriptions = "POST /v1/audio/transcriptions" // multipart/form-data
	PatternTranslations   = "POST /v1/audio/translations"   // multipart/form-data
	PatternSpeech         = "POST /v1/audio/speech"         // binary reply
	PatternModerations    = "POST /v1/moderations"
	PatternRerank         = "POST /v1/rerank"
	// PatternMessages is the messages-format (Anthropic-compatible)
	// endpoint.
	PatternMessages = "POST /v1/messages"
	// PatternGemini is the Gemini-style content generation of spec §4.4,
	// POST /v1beta/models/{model}:generateContent and
	// /v1beta/models/{model}:streamGenerateContent. ServeMux wildcards are
	// whole path segments, so the pattern takes the rest of the path and
	// the handler splits the model from the method at the last colon.
	PatternGemini = "POST /v1beta/models/{action...}"
)

// AccessPatterns returns every route of [NewAccessHandler] (a new slice
// each call).
func AccessPatterns() []string {
	return []string{
		PatternEmbeddings, PatternImages, PatternTranscriptions, PatternTranslations,
		PatternSpeech, PatternModerations, PatternRerank, PatternMessages, PatternGemini,
	}
}

// AccessRoutes returns the routes of h, normally the handler of
// [NewAccessHandler]: those of [AccessPatterns], as [route.Route] values
// that any router can mount.
func AccessRoutes(h http.Handler) []route.Route {
	return route.List(h, AccessPatterns()...)
}

// RegisterAccess registers h, normally the handler of [NewAccessHandler],
// on mux under every pattern of [AccessPatterns] (the routes of
// [AccessRoutes]). Like mux.Handle, it panics if a pattern conflicts with
// one already registered. (PatternGemini takes POST only, so it sits
// beside models.PatternBetaModel, which takes GET.)
func RegisterAccess(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, AccessRoutes(h))
}

// format is the wire format of an access point: who its clients are, how
// the upstream's key is sent, and the shape of its errors.
type format uint8

const (
	formatOpenAI   format = iota // Authorization: Bearer; general errors
	formatMessages               // x-api-key; messages-format errors
	formatGemini                 // x-goog-api-key; Google errors
)

func (f format) shape() apierrors.Shape {
	switch f {
	case formatMessages:
		return apierrors.Messages
	case formatGemini:
		return apierrors.Google
	}
	return apierrors.General
}

// api is the upstream API that speaks f natively.
func (f format) api() API {
	switch f {
	case formatMessages:
		return APIAnthropic
	case formatGemini:
		return APIGemini
	}
	return APIOpenAI
}

// endpoint describes one access point.
type endpoint struct {
	pattern   string
	path      string // appended to the upstream's base URL (OpenAI and messages formats)
	format    format
	multipart bool // the body is multipart/form-data with a model field
}

// endpoints are the access points but the Gemini one.
var endpoints = []*endpoint{
	{pattern: PatternEmbeddings, path: "/embeddings"},
	{pattern: PatternImages, path: "/images/generations"},
	{pattern: PatternTranscriptions, path: "/audio/transcriptions", multipart: true},
	{pattern: PatternTranslations, path: "/audio/translations", multipart: true},
	{pattern: PatternSpeech, path: "/audio/speech"},
	{pattern: PatternModerations, path: "/moderations"},
	{pattern: PatternRerank, path: "/rerank"},
	{pattern: PatternMessages, path: "/messages", format: formatMessages},
}

var geminiEndpoint = &endpoint{pattern: PatternGemini, format: formatGemini}

// accessConfig holds the settings of the access handlers: the options
// WithMaxRequestBytes, WithAllowed, WithEndpointType, WithKeepAlive and
// WithFallback.
type accessConfig struct {
	maxBytes  int64
	allow     models.AllowFunc
	need      map[string]models.EndpointType // by pattern
	keepAlive time.Duration
	fallback  map[string]http.Handler // by pattern
}

// defaultAccessConfig returns the access settings of a relay given no
// option.
func defaultAccessConfig() accessConfig {
	return accessConfig{
		maxBytes:  httpjson.DefaultMaxBytes,
		allow:     allowPrincipalModels,
		keepAlive: sse.DefaultKeepAlive,
		need: map[string]models.EndpointType{
			PatternMessages: models.Compat,
			PatternGemini:   models.Compat,
		},
	}
}

// clone returns a copy of c whose maps are its own.
func (c accessConfig) clone() accessConfig {
	c.need = maps.Clone(c.need)
	c.fallback = maps.Clone(c.fallback)
	return c
}

// WithMaxRequestBytes sets the largest request body accepted, JSON or
// multipart; a larger one is answered with a 400 invalid_request_error
// (in the endpoint's error shape) that names the limit. The default is 32
// MiB; n ≤ 0 restores it.
func WithMaxRequestBytes(n int64) AccessOption {
	return accessOption(func(c *accessConfig) {
		if n <= 0 {
			n = httpjson.DefaultMaxBytes
		}
		c.maxBytes = n
	})
}

// WithAllowed sets the check of which models the caller may use; a
// model it rejects is answered 404, as if it did not exist. By default a
// request may use the models its API key allows
// ([auth.Principal.AllowsModel]; every model without a principal). nil
// allows every model.
func WithAllowed(allow models.AllowFunc) AccessOption {
	return accessOption(func(c *accessConfig) {
		c.allow = allow
	})
}

// WithEndpointType sets the endpoint type that the model of the
// access point pattern (one of [AccessPatterns]) must list in its
// supported_endpoint_types; "" checks only that the model exists and may
// be used. The defaults: [models.Compat] for [PatternMessages] and
// [PatternGemini], which generate text as chat completions do (and which
// the Gemini-style model list advertises for compat models only); none for
// the others, whose models (embedding, image, audio, moderation, rerank
// models) have no endpoint type of their own in the spec, so that an
// upstream's model list need not name one (gatewaykit's types for them,
// models.Embeddings and the others, can be required with this option;
// the kit's own handlers of these access points require them). It panics
// if pattern is not an access point.
func WithEndpointType(pattern string, t models.EndpointType) AccessOption {
	mustBeAccessPattern("WithEndpointType", pattern)
	return accessOption(func(c *accessConfig) {
		c.need[pattern] = t
	})
}

// WithKeepAlive sets the interval of silence after which a relayed
// event stream writes a ": keep-alive" comment line to the client between
// the upstream's events. The default is [sse.DefaultKeepAlive] (15s); 0
// disables the comments. It panics if d is negative.
func WithKeepAlive(d time.Duration) AccessOption {
	if d < 0 {
		panic("relay: WithKeepAlive: negative interval")
	}
	return accessOption(func(c *accessConfig) {
		c.keepAlive = d
	})
}

// WithFallback makes h serve the requests of the access point
// pattern (one of [AccessPatterns]) that the relay does not pass through:
// those for a model that no route of the relay serves, and those for a
// model whose upstreams do not all speak the access point's format
// natively ([Upstream].API: [APIAnthropic] for [PatternMessages],
// [APIGemini] for [PatternGemini], [APIOpenAI] for the others). h can
// serve them itself, or translate them over a chat backend (which may
// relay them in the upstream's own format), as the gateway does.
//
// h gets the request as the client sent it, before any model check or
// quota reservation (h does its own): the same body, read again from
// memory (a multipart body is re-encoded from its parts, with the same
// boundary, so it has no Content-Length). Without a fallback, a request
// for a routed model is passed through to the route's upstreams whatever
// their API, and one for any other model is answered 404. It panics if
// pattern is not an access point or h is nil.
func WithFallback(pattern string, h http.Handler) AccessOption {
	mustBeAccessPattern("WithFallback", pattern)
	if h == nil {
		panic("relay: WithFallback: nil Handler")
	}
	return accessOption(func(c *accessConfig) {
		if c.fallback == nil {
			c.fallback = make(map[string]http.Handler)
		}
		c.fallback[pattern] = h
	})
}

// mustBeAccessPattern panics, naming the option fn, if pattern is not
// one of [AccessPatterns].
func mustBeAccessPattern(fn, pattern string) {
	if !slices.Contains(AccessPatterns(), pattern) {
		panic(fmt.Sprintf("relay: %s: %q is not an access point pattern", fn, pattern))
	}
}

// fallbackFor returns the handler of [WithFallback] that serves ep's
// requests for model, or nil when the relay passes them through.
func (h *accessHandler) fallbackFor(ep *endpoint, model string) http.Handler {
	fb := h.cfg.fallback[ep.pattern]
	if fb == nil {
		return nil
	}
	want := ep.format.api()
	ups := h.relay.routes[model]
	for _, u := range ups {
		if u.API != want {
			return fb
		}
	}
	if len(ups) == 0 {
		return fb
	}
	return nil
}

// NewAccessHandler returns the handler of the access points of spec §4.4
// ([AccessPatterns]): it relays each request to the upstreams of its model
// through r ([Relay.Do]: failover, timeouts, cancellation), with the reply
// streamed back. It routes the access points with a ServeMux of its own
// (under a prefix, mount it through http.StripPrefix). Mount it with
// [RegisterAccess], behind auth.Middleware for authentication and rate
// limits, with auth.WithErrorShape(apierrors.ShapeFor) so that refusals
// come in each format's shape.
//
// # The model
//
// It is read from the body's top-level "model" member on the JSON access
// points (the body is read whole, up to [WithMaxRequestBytes], because the
// model decides the upstream; every other member is forwarded byte for
// byte), from the "model" form field on the multipart ones (see below),
// and from the path on the Gemini-style ones. It is checked against
// catalog with models.Require — 404 for a model that is unknown or that
// [WithAllowed] rejects, 400 for one that lacks the endpoint type of
// [WithEndpointType] (by default compat for /v1/messages and the
// Gemini-style paths, none for the others) — and must be routed by r
// (else 404 too), unless [WithFallback] serves the access point:
// then requests for models that r does not route, or whose upstreams do
// not speak the access point's format ([Upstream].API), go to the
// fallback before any check. Upstream, it is renamed to [Upstream].Model: in the
// body, the form field or the path. Replies are passed through unchanged,
// so they name the model as the upstream does.
//
// # Upstream URLs and keys
//
// The OpenAI-format access points go to BaseURL + the path after /v1
// (BaseURL/embeddings …) with the upstream's key as Authorization: Bearer;
// /v1/messages goes to BaseURL/messages with the key as x-api-key, and
// the client's anthropic-version (default [DefaultAnthropicVersion]) and
// anthropic-beta headers; the Gemini-style paths go to
// {root}/v1beta/models/{model}:{method}, where the root is BaseURL without
// its /v1 (a BaseURL ending in /v1beta is used as it is, which suits
// Google's own API), with the key as x-goog-api-key and the client's
// query but its key parameter (alt=sse stays). The client's credentials
// and cookies never go upstream; the headers of [ForwardHeaders] do.
//
// # Streaming
//
// Multipart uploads (/v1/audio/transcriptions and /v1/audio/translations)
// are read part by part until the model field; the parts before it (the
// official Go SDK sends the file first) are spooled, in memory up to 256
// KiB and in a temporary file beyond, and the rest of the upload is read
// from the client only as the upstream reads it. The Gemini-style bodies
// are streamed to the upstream as they come. Streamed bodies fail over to
// the next upstream only if the failed one read none of it.
//
// Replies: an event stream (text/event-stream: the messages format's
// stream, :streamGenerateContent?alt=sse) is passed through event by
// event, each flushed at once, with keep-alive comments
// ([WithKeepAlive]) during long silences; any other reply is copied
// as it arrives, flushed after every read when its length is unknown (the
// audio of /v1/audio/speech, a chunked JSON array). The upstream's status,
// Content-Type, Content-Length, Content-Disposition and request id reach
// the client, with two exceptions, so that an upstream cannot serve a
// page on the gateway's origin: a reply that is neither JSON, audio, an
// image (PNG, JPEG, WebP, GIF), plain text nor subtitles (text/vtt,
// application/x-subrip), or that has no Content-Type, is sent as
// application/octet-stream with Content-Disposition: attachment; and
// every reply but an event stream carries X-Content-Type-Options: nosniff
// and Content-Security-Policy: sandbox.
//
// # Usage
//
// Each request reserves an estimate of its tokens against the client's
// key once its model is checked (auth.Reserve; 403 insufficient_quota in
// the access point's shape when all of the key's quota is reserved by
// requests in flight): for the messages format the body's bytes / 4 plus
// its max_tokens, for the Gemini style its Content-Length / 4 plus 4096,
// for the other JSON access points the body's bytes / 4, for multipart
// ones nothing. The reservation is settled to the tokens that the
// upstream reports, read from the reply as it passes, never held: the
// top-level "usage" (OpenAI and messages formats; total_tokens, else the
// sum of the parts) or "usageMetadata" (Gemini style; totalTokenCount) of
// a JSON reply, and of each event of a stream (a messages-format stream
// adds the input tokens of message_start to the output tokens of its last
// message_delta; a Gemini stream's last count wins). A reply that reports
// none (an audio file, most moderations) is not charged.
//
// The settlement also records the request once in the key's usage
// (auth.SettleParams): its model, its input tokens (prompt, input and
// cached tokens; promptTokenCount) and output tokens (completion and
// output tokens; candidatesTokenCount and thoughtsTokenCount), and their
// cost at the model's models.Pricing. A request that fails after its
// model was checked is recorded at no cost.
//
// # Errors
//
// Every error is rendered in the access point's shape: the general shape
// for the OpenAI-format ones, the messages-format envelope
// {"type":"error","error":{"type","message"}} on /v1/messages, Google's
// {"error":{"code","message","status","details"}} on the Gemini-style
// paths (see apierrors.Messages and apierrors.Google). An upstream 4xx
// keeps its status and message, a 429 its Retry-After; a 401 or 403 (the
// upstream refused the gateway's key, not the client's), a 5xx, an
// unreachable upstream or a reply that breaks off before its first byte
// is a 502, a timeout a 504 ([UpstreamError], [Relay.Do]). Upstream texts
// go through [Redact] before they reach the client or the log, error
// events of a passed-through stream included. A stream that
// breaks off later ends with one error event in the format's shape (on
// /v1/messages an "error" event, as that format sends); any other reply
// that breaks off after its first byte has its connection aborted, so the
// client cannot mistake it for a whole one.
//
// NewAccessHandler panics if r or catalog is nil. The handler is safe for
// concurrent use.
func NewAccessHandler(r *Relay, catalog models.Catalog, opts ...AccessOption) http.Handler {
	if r == nil {
		panic("relay: NewAccessHandler: nil Relay")
	}
	if catalog == nil {
		panic("relay: NewAccessHandler: nil Catalog")
	}
	// The access settings given to New, then those given here; the
	// relay's own settings (its transport, timeouts, logger…) are New's.
	c := r.access.clone()
	for _, o := range opts {
		o.applyToAccess(&c)
	}
	h := &accessHandler{relay: r.withTransport(credentialPlacer{next: r.transport}), catalog: catalog, cfg: c, logger: r.logger}
	h.routes = newAccessRoutes(h)
	return ForwardHeaders(h)
}

type accessHandler struct {
	relay   *Relay // a copy of the Relay given, whose transport places the key as each format does
	catalog models.Catalog
	cfg     accessConfig
	logger  *slog.Logger
	routes  *http.ServeMux // see newAccessRoutes
}

// allowPrincipalModels is the default model check: the key's allowed
// models.
func allowPrincipalModels(ctx context.Context, id string) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return !ok || p.AllowsModel(id)
}

func (h *accessHandler) renderer(f format) apierrors.Renderer {
	return apierrors.Renderer{Shape: f.shape(), Logger: h.logger}
}

// newAccessRoutes returns the ServeMux that routes h's requests: each
// access point's pattern to it, any other method on its path to a 405
// method_not_allowed (Allow: POST) in the access point's error shape, and
// any other path to a 404 not_found.
func newAccessRoutes(h *accessHandler) *http.ServeMux {
	mux := http.NewServeMux()
	for _, ep := range append(slices.Clip(endpoints), geminiEndpoint) {
		mux.HandleFunc(ep.pattern, func(w http.ResponseWriter, r *http.Request) { h.serve(w, r, ep) })
		_, path, _ := strings.Cut(ep.pattern, " ")
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", http.MethodPost)
			h.renderer(ep.format).Write(w, r, &apierrors.Error{
				Status:  http.StatusMethodNotAllowed,
				Type:    apierrors.TypeInvalidRequest,
				Code:    "method_not_allowed",
				Message: fmt.Sprintf("%s is not allowed here; use POST.", r.Method),
			})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.renderer(formatOpenAI).Write(w, r, apierrors.NotFound(fmt.Sprintf("No access point at %s.", apierrors.Echo(r.URL.Path))))
	})
	return mux
}

// ServeHTTP serves the request through the handler's own ServeMux (see
// newAccessRoutes).
func (h *accessHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.routes.ServeHTTP(w, r)
}

// serve serves a request of the access point ep.
func (h *accessHandler) serve(w http.ResponseWriter, r *http.Request, ep *endpoint) {
	telemetry.SetRoute(r.Context(), ep.pattern)
	ctx, release := withQuotaSlot(r.Context())
	defer release()
	r = r.WithContext(ctx)
	var err error
	switch {
	case ep.format == formatGemini:
		err = h.serveGemini(w, r)
	case ep.multipart:
		err = h.serveMultipart(w, r, ep)
	default:
		err = h.serveJSON(w, r, ep)
	}
	if err != nil {
		h.renderer(ep.format).Write(w, r, err)
	}
}

// check runs the model prerequisite check of ep for model, and keeps the
// model found in the request's quota slot, for its usage row.
func (h *accessHandler) check(ctx context.Context, ep *endpoint, model string) error {
	m, err := models.Require(ctx, h.catalog, model, h.cfg.need[ep.pattern], h.cfg.allow)
	if slot, ok := ctx.Value(quotaSlotKey{}).(*quotaSlot); ok && err == nil {
		slot.model = m
	}
	return err
}

// serveJSON relays an access point whose body is a JSON object with a
// "model" member: the body is read (up to the limit), the model checked
// and renamed to the upstream's name, and the bytes forwarded otherwise
// unchanged.
func (h *accessHandler) serveJSON(w http.ResponseWriter, r *http.Request, ep *endpoint) error {
	if err := httpjson.CheckContentType(r); err != nil {
		return err
	}
	body, err := httpjson.ReadBody(w, r, h.cfg.maxBytes)
	if err != nil {
		return err
	}
	loc, err := findModel(body)
	if err != nil {
		return err
	}
	if fb := h.fallbackFor(ep, loc.model); fb != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		fb.ServeHTTP(w, r)
		return nil
	}
	ctx := r.Context()
	if err := h.check(ctx, ep, loc.model); err != nil {
		return err
	}
	est, err := jsonEstimate(ep, body)
	if err != nil {
		return err
	}
	if err := h.reserve(ctx, est); err != nil {
		return err
	}
	res, u, err := h.relay.Do(withFormat(ctx, ep.format), loc.model, func(u *Upstream) (*http.Request, error) {
		b := loc.rename(body, u.Model)
		req, err := http.NewRequest(http.MethodPost, u.URL(ep.path), bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		h.setHeaders(r, req, ep.format)
		return req, nil
	})
	if err != nil {
		return err
	}
	return h.reply(w, r, ep.format, res, u)
}

// setHeaders sets the headers of an upstream request that come from the
// client: Accept, the ones kept by ForwardHeaders, and the format's own.
// The upstream's key is set by Relay.Do and the credential placer, never
// here; the client's credentials are never copied.
func (h *accessHandler) setHeaders(client, req *http.Request, f format) {
	setForwarded(client.Context(), req.Header)
	if v := client.Header.Get("Accept"); v != "" {
		req.Header.Set("Accept", v)
	}
	if f == formatMessages {
		setMessagesHeaders(client, req)
	}
}
