package models

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes served by [NewHandler], in net/http.ServeMux syntax. {id...}
// matches the rest of the path, so model ids that contain slashes
// ("org/model") work. [Register] registers all four.
const (
	// Pattern is the model list, in the format [FormatOf] selects.
	Pattern = "GET /v1/models"
	// PatternModel is one model, in the format [FormatOf] selects.
	PatternModel = "GET /v1/models/{id...}"
	// PatternBeta is the model list, always in the Gemini style.
	PatternBeta = "GET /v1beta/models"
	// PatternBetaModel is one model, always in the Gemini style.
	PatternBetaModel = "GET /v1beta/models/{id...}"
)

const (
	pathV1   = "/v1/models"
	pathBeta = "/v1beta/models"
)

// Page sizes of the paginated formats, as in the vendors' references.
const (
	anthropicDefaultLimit = 20
	anthropicMaxLimit     = 1000
	geminiDefaultPageSize = 50
	geminiMaxPageSize     = 1000
)

// Patterns returns every route of [NewHandler]: [Pattern],
// [PatternModel], [PatternBeta] and [PatternBetaModel] (a new slice each
// call).
func Patterns() []string {
	return []string{Pattern, PatternModel, PatternBeta, PatternBetaModel}
}

// Routes returns the routes of h, normally the handler of [NewHandler]:
// those of [Patterns], each for GET and HEAD, as [route.Route] values
// that any router can mount.
func Routes(h http.Handler) []route.Route {
	return route.List(h, Patterns()...)
}

// Register registers h, normally the handler of [NewHandler], on mux under
// every route of [Patterns] (those of [Routes]). Like mux.Handle, it
// panics if a pattern conflicts with one already registered.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

// Format is a wire format of the model list.
type Format uint8

// The formats of GET /v1/models.
const (
	// FormatOpenAI is {"object":"list","data":[…]}, the default.
	FormatOpenAI Format = iota
	// FormatAnthropic is the messages-format list, {"data":[…],"has_more",
	// "first_id","last_id"}.
	FormatAnthropic
	// FormatGemini is the Gemini-style list, {"models":[…],"nextPageToken"}.
	FormatGemini
)

// String returns "openai", "anthropic" or "gemini".
func (f Format) String() string {
	switch f {
	case FormatOpenAI:
		return "openai"
	case FormatAnthropic:
		return "anthropic"
	case FormatGemini:
		return "gemini"
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// FormatOf returns the format that the credentials of r select for the
// /v1/models routes (spec §4.4 and §5), checked in this order:
//
//  1. [FormatAnthropic] when both headers x-api-key and anthropic-version
//     are present;
//  2. [FormatGemini] when header x-goog-api-key or query parameter key is
//     present;
//  3. [FormatOpenAI] otherwise.
//
// A header or parameter counts as present when its value is not empty.
// The /v1beta/models routes ignore FormatOf and always answer in the
// Gemini style.
func FormatOf(r *http.Request) Format {
	switch {
	case r.Header.Get("x-api-key") != "" && r.Header.Get("anthropic-version") != "":
		return FormatAnthropic
	case r.Header.Get("x-goog-api-key") != "" || r.URL.Query().Get("key") != "":
		return FormatGemini
	}
	return FormatOpenAI
}

// NewHandler returns the handler of the model list routes: [Pattern],
// [PatternModel], [PatternBeta] and [PatternBetaModel]. It dispatches on
// the request path itself, so mount it at those paths, with [Register] or
// with any router; other paths answer 404 not_found, and methods other than
// GET and HEAD 405 method_not_allowed.
//
// The format is chosen by [FormatOf] on the /v1 routes, and is always
// Gemini-style on the /v1beta routes; the package documentation describes
// each format and its pagination. Lists keep the order of [Catalog.List]
// and leave out the models that the [WithAllowed] check rejects. Errors are
// rendered by apierrors in the shape of the path's family
// (apierrors.ShapeFor), whatever the format: Google's error object on the
// /v1beta routes, the general shape on the /v1 routes.
//
// NewHandler panics if c is nil. The handler is safe for concurrent use.
func NewHandler(c Catalog, opts ...Option) http.Handler {
	if c == nil {
		panic("models: NewHandler: nil Catalog")
	}
	cfg := newConfig(opts)
	return &handler{
		catalog:  c,
		allow:    cfg.allow,
		renderer: apierrors.Renderer{Shape: apierrors.General, Logger: cfg.logger},
	}
}

type handler struct {
	catalog  Catalog
	allow    AllowFunc
	renderer apierrors.Renderer
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rd := h.renderer
	rd.Shape = apierrors.ShapeFor(r) // Google's error object under /v1beta/
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rd.Write(w, r, methodNotAllowed(r.Method))
		return
	}
	beta, id, ok := splitPath(r.URL.Path)
	if !ok {
		rd.Write(w, r, apierrors.NotFound(fmt.Sprintf("no route for %s %s", apierrors.Echo(r.Method), apierrors.Echo(r.URL.Path))))
		return
	}
	telemetry.SetRoute(r.Context(), routePattern(beta, id))
	format := FormatGemini
	if !beta {
		format = FormatOf(r)
	}
	var (
		body any
		err  error
	)
	if id == "" {
		body, err = h.list(r, format)
	} else {
		body, err = h.get(r, format, id)
	}
	if err != nil {
		rd.Write(w, r, err)
		return
	}
	writeJSON(w, r, rd, body)
}

// routePattern returns the pattern of the route that splitPath found.
func routePattern(beta bool, id string) string {
	switch {
	case beta && id == "":
		return PatternBeta
	case beta:
		return PatternBetaModel
	case id == "":
		return Pattern
	}
	return PatternModel
}

// splitPath splits a request path into the route family and the model id,
// which is empty for the list.
func splitPath(path string) (beta bool, id string, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(path, pathV1):
		rest = path[len(pathV1):]
	case strings.HasPrefix(path, pathBeta):
		beta, rest = true, path[len(pathBeta):]
	default:
		return false, "", false
	}
	if rest == "" {
		return beta, "", true
	}
	if rest[0] != '/' {
		return false, "", false
	}
	return beta, rest[1:], true
}

func (h *handler) list(r *http.Request, f Format) (any, error) {
	ctx := r.Context()
	all, err := h.catalog.List(ctx)
	if err != nil {
		return nil, catalogError(fmt.Errorf("models: list: %w", err))
	}
	visible := make([]Model, 0, len(all))
	for _, m := range all {
		if h.allow.allows(ctx, m.ID) {
			visible = append(visible, m)
		}
	}
	switch f {
	case FormatAnthropic:
		return anthropicPage(r.URL.Query(), visible)
	case FormatGemini:
		return geminiPage(r.URL.Query(), visible)
	}
	res := OpenAIList{Object: "list", Data: make([]OpenAIModel, len(visible))}
	for i := range visible {
		res.Data[i] = toOpenAI(&visible[i])
	}
	return res, nil
}

func (h *handler) get(r *http.Request, f Format, id string) (any, error) {
	m, err := Require(r.Context(), h.catalog, id, "", h.allow)
	if err != nil {
		return nil, err
	}
	switch f {
	case FormatAnthropic:
		return toAnthropic(m), nil
	case FormatGemini:
		return toGemini(m), nil
	}
	return toOpenAI(m), nil
}

// anthropicPage applies Anthropic's pagination: limit (1 to 1000, default
// 20) and one of after_id or before_id.
func anthropicPage(q url.Values, list []Model) (AnthropicList, error) {
	limit := anthropicDefaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > anthropicMaxLimit {
			return AnthropicList{}, apierrors.InvalidRequestf("limit", "limit must be an integer from 1 to %d", anthropicMaxLimit)
		}
		limit = n
	}
	after, before := q.Get("after_id"), q.Get("before_id")
	start, end := 0, min(limit, len(list))
	hasMore := end < len(list)
	switch {
	case after != "" && before != "":
		return AnthropicList{}, apierrors.InvalidRequest("before_id", "after_id and before_id cannot both be set")
	case after != "":
		i := indexOf(list, after)
		if i < 0 {
			return AnthropicList{}, apierrors.InvalidRequestf("after_id", "after_id %s is not a model of this list", apierrors.Quote(after))
		}
		start = i + 1
		end = min(start+limit, len(list))
		hasMore = end < len(list)
	case before != "":
		i := indexOf(list, before)
		if i < 0 {
			return AnthropicList{}, apierrors.InvalidRequestf("before_id", "before_id %s is not a model of this list", apierrors.Quote(before))
		}
		start, end = max(0, i-limit), i
		hasMore = start > 0
	}
	res := AnthropicList{Data: make([]AnthropicModel, 0, end-start), HasMore: hasMore}
	for i := start; i < end; i++ {
		res.Data = append(res.Data, toAnthropic(&list[i]))
	}
	if n := len(res.Data); n > 0 {
		first, last := res.Data[0].ID, res.Data[n-1].ID
		res.FirstID, res.LastID = &first, &last
	}
	return res, nil
}

// geminiPage applies Google's pagination: pageSize (default 50, at most
// 1000) and pageToken.
func geminiPage(q url.Values, list []Model) (GeminiList, error) {
	size := geminiDefaultPageSize
	if s := q.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return GeminiList{}, apierrors.InvalidRequest("pageSize", "pageSize must be a non-negative integer")
		}
		if n > 0 {
			size = min(n, geminiMaxPageSize)
		}
	}
	start := 0
	if tok := q.Get("pageToken"); tok != "" {
		i := -1
		if id, err := base64.RawURLEncoding.DecodeString(tok); err == nil {
			i = indexOf(list, string(id))
		}
		if i < 0 {
			return GeminiList{}, apierrors.InvalidRequest("pageToken", "pageToken is not valid for this list")
		}
		start = i + 1
	}
	end := min(start+size, len(list))
	res := GeminiList{Models: make([]GeminiModel, 0, end-start)}
	for i := start; i < end; i++ {
		res.Models = append(res.Models, toGemini(&list[i]))
	}
	if end < len(list) {
		res.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(list[end-1].ID))
	}
	return res, nil
}

func indexOf(list []Model, id string) int {
	for i := range list {
		if list[i].ID == id {
			return i
		}
	}
	return -1
}

func methodNotAllowed(method string) *apierrors.Error {
	return &apierrors.Error{
		Status:  http.StatusMethodNotAllowed,
		Type:    apierrors.TypeInvalidRequest,
		Code:    "method_not_allowed",
		Message: fmt.Sprintf("method %s is not allowed here; use GET", method),
		Header:  http.Header{"Allow": {"GET, HEAD"}},
	}
}

func writeJSON(w http.ResponseWriter, r *http.Request, rd apierrors.Renderer, body any) {
	b, err := json.Marshal(body)
	if err != nil {
		rd.Write(w, r, apierrors.Internal(fmt.Errorf("models: encode reply: %w", err)))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}
