package videos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes served by [NewHandler], in net/http.ServeMux syntax.
// [Register] registers them all.
const (
	// PatternCreate creates a task (spec §4.5), from JSON or
	// multipart/form-data.
	PatternCreate = "POST /v1/videos"
	// PatternList lists the caller's tasks, newest first.
	PatternList = "GET /v1/videos"
	// PatternGet is the status of a task (spec §4.6).
	PatternGet = "GET /v1/videos/{task_id}"
	// PatternDelete deletes a task and its content.
	PatternDelete = "DELETE /v1/videos/{task_id}"
	// PatternContent downloads a completed task's video or thumbnail (spec
	// §4.7). GET also serves HEAD. This route takes an admin-console
	// session as well as an API key: mount it behind an auth.Middleware
	// with auth.WithSessionAuthenticator.
	PatternContent = "GET /v1/videos/{task_id}/content"
	// PatternMultimodal creates a task on the multimodal path (spec §4.8).
	PatternMultimodal = "POST /v1/vendorai/videos"
	// PatternMultimodalAlias is the spelling of the multimodal path that
	// the spec's sample requests use.
	PatternMultimodalAlias = "POST /v1/vendor/videos"
)

// Patterns returns every route of [NewHandler] but [PatternContent], which
// usually sits behind a different middleware (a new slice each call).
func Patterns() []string {
	return []string{PatternCreate, PatternList, PatternGet, PatternDelete, PatternMultimodal, PatternMultimodalAlias}
}

// Routes returns every route of h, normally the handler of
// [NewHandler]: those of [Patterns], then [PatternContent] (the GET ones
// for HEAD too), as [route.Route] values that any router can mount. To
// put the content route behind another middleware, mount the routes
// whose Path is that of PatternContent apart.
func Routes(h http.Handler) []route.Route {
	return route.List(h, append(Patterns(), PatternContent)...)
}

// Register registers h, normally the handler of [NewHandler], on mux
// under every route: [Patterns] and [PatternContent] (those of
// [Routes]). Like mux.Handle, it panics if a pattern conflicts with one
// already registered. To put the content route behind another
// middleware, register the routes one by one instead.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

// NewHandler returns the handler of every video route (see [Patterns] and
// [PatternContent]), which it routes with a ServeMux of its own: mount
// it with [Register] (under a prefix, through http.StripPrefix). store
// holds the tasks,
// catalog the models (each request's model must list compat-video), and
// contents the results that a runner (package videos/runner) sharing store and contents
// generates.
//
// Every request is scoped to an owner ([WithOwner]; by default the
// account of auth.Middleware's principal, and auth.AnonymousOwner, shared
// by all, for a request without one: a handler not behind the
// middleware serves everyone as one owner). An OwnerFunc that refuses a
// request makes it a 401 missing_authorization in the general error
// shape. Errors of the create routes use the flat shape {code, message}
// plus the mirrored "error" object, always with status 400 but for 429
// and 5xx; those of the other routes use the content-download shape
// {"error":{"message","type"}}. Another owner's task is answered 404, as
// one that does not exist.
//
// NewHandler panics if store, catalog or contents is nil. The handler is
// safe for concurrent use.
func NewHandler(store TaskStore, catalog models.Catalog, contents ContentStore, opts ...Option) http.Handler {
	switch {
	case store == nil:
		panic("videos: NewHandler: nil TaskStore")
	case catalog == nil:
		panic("videos: NewHandler: nil Catalog")
	case contents == nil:
		panic("videos: NewHandler: nil ContentStore")
	}
	cfg := newConfig(opts)
	h := &handler{
		store:    store,
		catalog:  catalog,
		contents: contents,
		cfg:      cfg,
		general:  apierrors.Renderer{Shape: apierrors.General, Logger: cfg.logger},
		flat:     apierrors.Renderer{Shape: apierrors.Flat, Logger: cfg.logger},
		content:  apierrors.Renderer{Shape: apierrors.Content, Logger: cfg.logger},
	}
	h.routes = newRoutes(h)
	return h
}

type handler struct {
	store    TaskStore
	catalog  models.Catalog
	contents ContentStore
	cfg      *config
	general  apierrors.Renderer
	flat     apierrors.Renderer
	content  apierrors.Renderer
	routes   *http.ServeMux // see newRoutes
}

// newRoutes returns the ServeMux that routes h's requests: each pattern
// to its method (with PathValue("task_id")) once the request's owner is
// known, any other method on those paths to a 405 method_not_allowed
// naming the methods allowed (Allow), and any other path to a 404
// not_found, both in the content-download shape.
func newRoutes(h *handler) *http.ServeMux {
	mux := http.NewServeMux()
	owned := func(serve func(w http.ResponseWriter, r *http.Request, owner, id string)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			owner, ok := h.cfg.owner(r.Context())
			if !ok || owner == "" {
				// The OwnerFunc refused the request (the TaskStore keeps no
				// task without an owner).
				h.general.Write(w, r, apierrors.MissingAuthorization("This endpoint needs an authenticated caller (an API key in the Authorization header)."))
				return
			}
			serve(w, r, owner, r.PathValue("task_id"))
		}
	}
	collection := func(serve func(w http.ResponseWriter, r *http.Request, owner string)) http.HandlerFunc {
		return owned(func(w http.ResponseWriter, r *http.Request, owner, _ string) { serve(w, r, owner) })
	}
	mux.Handle(PatternCreate, collection(h.create))
	mux.Handle(PatternMultimodal, collection(h.createMultimodal))
	mux.Handle(PatternMultimodalAlias, collection(h.createMultimodal))
	mux.Handle(PatternList, collection(h.list)) // HEAD too
	mux.Handle(PatternGet, owned(h.get))        // HEAD too
	mux.Handle(PatternDelete, owned(h.delete))
	mux.Handle(PatternContent, owned(h.serveContent)) // HEAD too
	for path, allow := range map[string]string{
		"/v1/videos":                   "GET, HEAD, POST",
		"/v1/vendorai/videos":          "POST",
		"/v1/vendor/videos":            "POST",
		"/v1/videos/{task_id}":         "GET, HEAD, DELETE",
		"/v1/videos/{task_id}/content": "GET, HEAD",
	} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			h.content.Write(w, r, &apierrors.Error{Status: http.StatusMethodNotAllowed, Type: apierrors.TypeInvalidRequest,
				Code: "method_not_allowed", Message: fmt.Sprintf("Method %s is not allowed here; use %s.", apierrors.Echo(r.Method), allow)})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.content.Write(w, r, apierrors.NotFound(fmt.Sprintf("No video route for %s %s.", apierrors.Echo(r.Method), apierrors.Echo(r.URL.Path))))
	})
	return mux
}

// ServeHTTP serves the request through the handler's own ServeMux (see
// newRoutes): mounted with [Register], the request's path has already
// been matched to one of its patterns, and matching it again costs a
// lookup; mounted some other way, the ServeMux still does the routing.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.routes.ServeHTTP(w, r)
	// The pattern of h.routes that served r (ServeMux sets r.Pattern),
	// unless a router before set the route.
	telemetry.SetRoute(r.Context(), r.Pattern)
}

// create serves POST /v1/videos.
func (h *handler) create(w http.ResponseWriter, r *http.Request, owner string) {
	req, err := decodeCreate(w, r, h.cfg)
	if err == nil {
		err = h.start(w, r, owner, req.Model, Request{Create: req}, func(m *models.Model, t *Task) error { return h.checkCreate(req, m, t) })
	}
	if err != nil {
		h.flat.Write(w, r, err)
	}
}

// createMultimodal serves POST /v1/vendorai/videos.
func (h *handler) createMultimodal(w http.ResponseWriter, r *http.Request, owner string) {
	req, err := decodeMultimodal(w, r, h.cfg)
	if err == nil {
		err = h.start(w, r, owner, req.Model, Request{Multimodal: req}, func(m *models.Model, t *Task) error { return h.checkMultimodal(req, m, t) })
	}
	if err != nil {
		h.flat.Write(w, r, err)
	}
}

// start makes the task of a decoded request, req, for model, if the
// catalogue has the model and check accepts the request for it (check
// may fill in the task), and saves it. It returns the error for the
// client when it did not get as far as saving; saving answers the
// client itself.
func (h *handler) start(w http.ResponseWriter, r *http.Request, owner, model string, req Request, check func(*models.Model, *Task) error) error {
	m, err := models.Require(r.Context(), h.catalog, model, models.CompatVideo, h.cfg.allow)
	if err != nil {
		return err
	}
	t := h.newTask(owner, m.ID)
	if err := check(m, t); err != nil {
		return err
	}
	t.Request = req
	h.save(w, r, t, m)
	return nil
}

func (h *handler) newTask(owner, model string) *Task {
	return &Task{
		ID:        NewID(),
		Owner:     owner,
		Model:     model,
		Status:    StatusQueued,
		CreatedAt: h.cfg.now(),
	}
}

// save reserves the cost of a new task, submits it (see
// [WithSubmitter]), stores it and answers the creation. What fails after
// the reservation releases it.
func (h *handler) save(w http.ResponseWriter, r *http.Request, t *Task, m *models.Model) {
	rsv, err := h.reserve(r.Context(), t, m)
	var rep *pipeline.Reply
	if err == nil {
		if rep, err = h.intercept(r.Context(), m.ID, t.Request.of()); err == nil {
			err = h.submit(r.Context(), t)
		}
		if err != nil && rsv != nil {
			_, _ = rsv.Settle(r.Context(), 0)
		}
	}
	if err != nil {
		rep.Done(r.Context(), &pipeline.Usage{}, err)
		h.flat.Write(w, r, err)
		return
	}
	if err := h.store.Create(r.Context(), t); err != nil {
		rep.Done(r.Context(), &pipeline.Usage{}, err)
		if rsv != nil {
			_, _ = rsv.Settle(r.Context(), 0)
		}
		if t.BackendRef != "" {
			h.cfg.logger.LogAttrs(r.Context(), slog.LevelWarn, "videos: a submitted task could not be stored; its work is orphaned",
				slog.String("task_id", t.ID), slog.String("backend_ref", t.BackendRef), slog.String("error", err.Error()))
		}
		h.flat.Write(w, r, storeError(r.Context(), err))
		return
	}
	rep.Done(r.Context(), &pipeline.Usage{}, nil)
	if h.cfg.notify != nil {
		h.cfg.notify()
	}
	h.writeJSON(w, r, Created{ID: t.ID, Status: t.Status, Progress: t.Progress, CreatedAt: t.CreatedAt.Unix()})
}

// submit starts t's work with the configured Submitter, if any, and
// records its reference on t.
func (h *handler) submit(ctx context.Context, t *Task) error {
	if h.cfg.submitter == nil {
		return nil
	}
	ref, err := h.cfg.submitter.Submit(ctx, t.Clone())
	if err != nil {
		// The generator's failure: its own *apierrors.Error (the relay's
		// 502), a context error, or a 500.
		if apierrors.Has(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return apierrors.Internal(fmt.Errorf("videos: Submitter: %w", err))
	}
	t.BackendRef = ref
	return nil
}

// storeError turns a failure of the TaskStore or the ContentStore on the
// request of ctx into the error to render (apierrors.FromDependency): an
// outage is a 503 with Retry-After, in the shape of the route.
func storeError(ctx context.Context, err error) error {
	return apierrors.FromDependency(ctx, fmt.Errorf("videos: store: %w", err))
}

func notFound(id string) *apierrors.Error {
	return apierrors.NotFound(fmt.Sprintf("No video task found with id %s.", apierrors.Quote(id)))
}

// getTask loads owner's task, with the errors of the content shape.
func (h *handler) getTask(ctx context.Context, owner, id string) (*Task, error) {
	if !ValidID(id) {
		return nil, notFound(id)
	}
	t, err := h.store.Get(ctx, owner, id)
	if errors.Is(err, ErrNotFound) {
		return nil, notFound(id).WithCause(err)
	}
	if err != nil {
		return nil, storeError(ctx, err)
	}
	return t, nil
}

// get serves GET /v1/videos/{task_id}.
func (h *handler) get(w http.ResponseWriter, r *http.Request, owner, id string) {
	t, err := h.getTask(r.Context(), owner, id)
	if err != nil {
		h.content.Write(w, r, err)
		return
	}
	if !t.Status.Terminal() && h.cfg.pollAfter > 0 {
		w.Header().Set("Openai-Poll-After-Ms", strconv.FormatInt(h.cfg.pollAfter.Milliseconds(), 10))
	}
	h.writeJSON(w, r, wireVideo(t, h.contentURL(r, t.ID)))
}

// contentURL is the URL of task id's content endpoint: under the
// configured public base URL ([WithPublicURL]), or else a path relative
// to the client's origin, the request's path up to and including
// …/videos followed by /{id}/content. It is never built from the Host
// header or any other header, which a client (or a proxy in front) may
// set to anything.
func (h *handler) contentURL(r *http.Request, id string) string {
	if u := h.cfg.publicURL; u != nil {
		return u.JoinPath("v1", "videos", id, "content").String()
	}
	path := "/v1/videos"
	if i := strings.LastIndex(r.URL.Path, "/videos"); i >= 0 {
		path = r.URL.Path[:i+len("/videos")]
	}
	return path + "/" + id + "/content"
}

// list serves GET /v1/videos.
func (h *handler) list(w http.ResponseWriter, r *http.Request, owner string) {
	q := r.URL.Query()
	p := ListParams{Owner: owner, After: q.Get("after"), Limit: 20, Order: OrderDesc}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			h.content.Write(w, r, apierrors.InvalidRequestf("limit", "limit must be a whole number from 1 to 100, got %s", apierrors.Quote(s)))
			return
		}
		p.Limit = n
	}
	switch o := q.Get("order"); o {
	case "", "desc":
	case "asc":
		p.Order = OrderAsc
	default:
		h.content.Write(w, r, apierrors.InvalidRequestf("order", `order must be "asc" or "desc", got %s`, apierrors.Quote(o)))
		return
	}
	if p.After != "" && !ValidID(p.After) {
		h.content.Write(w, r, apierrors.InvalidRequestf("after", "after: no video task found with id %s", apierrors.Quote(p.After)))
		return
	}
	tasks, more, err := h.store.List(r.Context(), p)
	if errors.Is(err, ErrNotFound) {
		h.content.Write(w, r, apierrors.InvalidRequestf("after", "after: no video task found with id %s", apierrors.Quote(p.After)).WithCause(err))
		return
	}
	if err != nil {
		h.content.Write(w, r, storeError(r.Context(), err))
		return
	}
	out := VideoList{Object: "list", Data: make([]Video, len(tasks)), HasMore: more}
	for i, t := range tasks {
		out.Data[i] = wireVideo(t, h.contentURL(r, t.ID))
	}
	if len(tasks) > 0 {
		first, last := tasks[0].ID, tasks[len(tasks)-1].ID
		out.FirstID, out.LastID = &first, &last
	}
	h.writeJSON(w, r, out)
}

// delete serves DELETE /v1/videos/{task_id}. A task is deleted in any
// state; a running one is abandoned by its worker at its next update, and
// the quota reserved for one that had not finished is released.
func (h *handler) delete(w http.ResponseWriter, r *http.Request, owner, id string) {
	if !ValidID(id) {
		h.content.Write(w, r, notFound(id))
		return
	}
	// The task as it was, for the charge of one that has not finished.
	t, err := h.store.Get(r.Context(), owner, id)
	if err == nil {
		err = h.store.Delete(r.Context(), owner, id)
	}
	if errors.Is(err, ErrNotFound) {
		h.content.Write(w, r, notFound(id).WithCause(err))
		return
	}
	if err != nil {
		h.content.Write(w, r, storeError(r.Context(), err))
		return
	}
	if !t.Status.Terminal() {
		h.release(r.Context(), t)
	}
	if err := h.contents.Delete(context.WithoutCancel(r.Context()), id); err != nil {
		h.cfg.logger.LogAttrs(r.Context(), slog.LevelError, "videos: deleting content",
			slog.String("task_id", id), slog.String("error", err.Error()))
	}
	h.writeJSON(w, r, Deleted{ID: id, Object: "video.deleted", Deleted: true})
}

func (h *handler) writeJSON(w http.ResponseWriter, r *http.Request, v any) {
	if err := httpjson.Write(w, http.StatusOK, v); err != nil {
		h.content.Write(w, r, apierrors.Internal(err))
	}
}

// contentDisposition names the downloaded file.
func contentDisposition(id string, v Variant, contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	ext := contentExt[mt]
	if ext == "" {
		ext = ".bin"
	}
	name := id + ext
	if v == VariantThumbnail {
		name = id + "_thumbnail" + ext
	}
	return mime.FormatMediaType("attachment", map[string]string{"filename": name})
}
