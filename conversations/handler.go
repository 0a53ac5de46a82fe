package conversations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/validation"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes served by [NewHandler], in [http.ServeMux] syntax. [Register]
// registers them all.
const (
	// PatternCreate creates a conversation.
	PatternCreate = "POST /v1/conversations"
	// PatternGet retrieves a conversation.
	PatternGet = "GET /v1/conversations/{conversation_id}"
	// PatternUpdate replaces a conversation's metadata.
	PatternUpdate = "POST /v1/conversations/{conversation_id}"
	// PatternDelete deletes a conversation and its items.
	PatternDelete = "DELETE /v1/conversations/{conversation_id}"
	// PatternListItems lists a conversation's items.
	PatternListItems = "GET /v1/conversations/{conversation_id}/items"
	// PatternAddItems adds items to a conversation.
	PatternAddItems = "POST /v1/conversations/{conversation_id}/items"
	// PatternGetItem retrieves an item of a conversation.
	PatternGetItem = "GET /v1/conversations/{conversation_id}/items/{item_id}"
	// PatternDeleteItem deletes an item of a conversation.
	PatternDeleteItem = "DELETE /v1/conversations/{conversation_id}/items/{item_id}"
)

// Patterns returns every route of [NewHandler] (a new slice each call).
func Patterns() []string {
	return []string{PatternCreate, PatternGet, PatternUpdate, PatternDelete,
		PatternListItems, PatternAddItems, PatternGetItem, PatternDeleteItem}
}

// Routes returns the routes of h, normally the handler of [NewHandler]:
// those of [Patterns] (the GET ones for HEAD too), as [route.Route]
// values that any router can mount.
func Routes(h http.Handler) []route.Route {
	return route.List(h, Patterns()...)
}

// Register registers h, normally the handler of [NewHandler], on mux
// under every route of [Patterns] (those of [Routes]). Like mux.Handle,
// it panics if a pattern conflicts with one already registered.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

type handler struct {
	store  Store
	cfg    *config
	rd     apierrors.Renderer
	routes *http.ServeMux // see newRoutes
}

// NewHandler returns the handler of every route of [Patterns], which it
// routes with a ServeMux of its own: mount it with [Register] (under a
// prefix, through http.StripPrefix). store keeps the conversations and
// their items; give the same store to the responses handler
// (responses.WithConversations) so that POST /v1/responses continues
// them. See the package documentation for the wire.
//
// Mount it behind [auth.Middleware]: every request is scoped to an owner
// ([WithOwner]). Errors are in the general shape.
//
// NewHandler panics if store is nil. The handler is safe for concurrent
// use.
func NewHandler(store Store, opts ...Option) http.Handler {
	if store == nil {
		panic("conversations: NewHandler: nil Store")
	}
	cfg := newConfig(opts)
	h := &handler{store: store, cfg: cfg, rd: apierrors.Renderer{Shape: apierrors.General, Logger: cfg.logger}}
	h.routes = newRoutes(h)
	return h
}

// newRoutes returns the ServeMux that routes h's requests: each pattern
// of [Patterns] to its method once the request's owner is known, any
// other method on those paths to a JSON 405 method_not_allowed that names
// the methods allowed (Allow), and any other path to a JSON 404
// not_found.
func newRoutes(h *handler) *http.ServeMux {
	mux := http.NewServeMux()
	owned := func(serve func(w http.ResponseWriter, r *http.Request, owner string)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			owner, ok := h.cfg.owner(r.Context())
			if !ok {
				h.rd.Write(w, r, apierrors.MissingAuthorization("This endpoint needs an authenticated caller (an API key in the Authorization header)."))
				return
			}
			serve(w, r, owner)
		}
	}
	mux.Handle(PatternCreate, owned(h.create))
	mux.Handle(PatternGet, owned(h.get)) // HEAD too
	mux.Handle(PatternUpdate, owned(h.update))
	mux.Handle(PatternDelete, owned(h.delete))
	mux.Handle(PatternListItems, owned(h.listItems)) // HEAD too
	mux.Handle(PatternAddItems, owned(h.addItems))
	mux.Handle(PatternGetItem, owned(h.getItem)) // HEAD too
	mux.Handle(PatternDeleteItem, owned(h.deleteItem))
	notAllowed := func(allow ...string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			h.rd.Write(w, r, apierrors.MethodNotAllowed(r.Method, r.URL.Path, allow))
		}
	}
	mux.Handle("/v1/conversations", notAllowed(http.MethodPost))
	mux.Handle("/v1/conversations/{conversation_id}", notAllowed(http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete))
	mux.Handle("/v1/conversations/{conversation_id}/items", notAllowed(http.MethodGet, http.MethodHead, http.MethodPost))
	mux.Handle("/v1/conversations/{conversation_id}/items/{item_id}", notAllowed(http.MethodGet, http.MethodHead, http.MethodDelete))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.rd.Write(w, r, apierrors.NotFound(fmt.Sprintf("No conversations route for %s %s.", apierrors.Echo(r.Method), apierrors.Echo(r.URL.Path))))
	})
	return mux
}

// ServeHTTP serves the request through the handler's own ServeMux (see
// newRoutes).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.routes.ServeHTTP(w, r)
	// The pattern of h.routes that served r (ServeMux sets r.Pattern),
	// unless a router before set the route.
	telemetry.SetRoute(r.Context(), r.Pattern)
}

// create serves POST /v1/conversations.
func (h *handler) create(w http.ResponseWriter, r *http.Request, owner string) {
	var req CreateRequest
	if err := httpjson.Decode(w, r, h.cfg.maxBytes, &req); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	if err := validation.First(checkItems(req.Items), checkMetadata(req.Metadata)); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	metadata := req.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	c := &Conversation{ID: ids.New(IDPrefix), Object: ObjectConversation, CreatedAt: h.cfg.now().Unix(), Metadata: metadata}
	if err := h.store.Create(r.Context(), owner, c, responses.StoredItems(req.Items)); err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, c.ID, ""))
		return
	}
	h.write(w, r, c)
}

// get serves GET /v1/conversations/{conversation_id}.
func (h *handler) get(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("conversation_id")
	c, err := h.store.Get(r.Context(), owner, id)
	if err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, ""))
		return
	}
	h.write(w, r, c)
}

// update serves POST /v1/conversations/{conversation_id}.
func (h *handler) update(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("conversation_id")
	var req UpdateRequest
	if err := httpjson.Decode(w, r, h.cfg.maxBytes, &req); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	if req.Metadata == nil {
		h.rd.Write(w, r, validation.Required("metadata"))
		return
	}
	if err := checkMetadata(req.Metadata); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	c, err := h.store.Update(r.Context(), owner, id, req.Metadata)
	if err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, ""))
		return
	}
	h.write(w, r, c)
}

// delete serves DELETE /v1/conversations/{conversation_id}.
func (h *handler) delete(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("conversation_id")
	if err := h.store.Delete(r.Context(), owner, id); err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, ""))
		return
	}
	h.write(w, r, &DeletedConversation{ID: id, Object: ObjectDeleted, Deleted: true})
}

// listItems serves GET /v1/conversations/{conversation_id}/items: a page
// of limit items (20 by default, 1 to 100), newest first unless
// order=asc, after the item named by after. include is accepted and
// changes nothing: items are kept whole, and answered whole.
func (h *handler) listItems(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("conversation_id")
	q, err := itemQuery(r)
	if err != nil {
		h.rd.Write(w, r, err)
		return
	}
	items, more, err := h.store.ListItems(r.Context(), owner, id, q)
	if errors.Is(err, ErrItemNotFound) {
		err = apierrors.InvalidRequestf("after", "after names no item of conversation %s: %s", apierrors.Quote(id), apierrors.Quote(q.After)).WithCause(err)
	}
	if err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, ""))
		return
	}
	h.write(w, r, newItemList(items, more))
}

// itemQuery reads the query of a list request.
func itemQuery(r *http.Request) (ItemQuery, error) {
	v := r.URL.Query()
	q := ItemQuery{Limit: DefaultListLimit, Order: OrderDesc, After: v.Get("after")}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxListLimit {
			return q, apierrors.InvalidRequestf("limit", "limit must be an integer from 1 to %d, got %s", MaxListLimit, apierrors.Quote(s))
		}
		q.Limit = n
	}
	switch o := v.Get("order"); o {
	case "", OrderDesc:
	case OrderAsc:
		q.Order = OrderAsc
	default:
		return q, apierrors.InvalidRequestf("order", "order must be asc or desc, got %s", apierrors.Quote(o))
	}
	return q, nil
}

// newItemList returns the list of items, the first page of more.
func newItemList(items []responses.Item, more bool) *ItemList {
	l := &ItemList{Object: ObjectList, Data: items, HasMore: more}
	if n := len(items); n > 0 {
		l.FirstID, l.LastID = items[0].ID, items[n-1].ID
	} else {
		l.Data = []responses.Item{}
	}
	return l
}

// addItems serves POST /v1/conversations/{conversation_id}/items: it
// answers the items added, with their ids.
func (h *handler) addItems(w http.ResponseWriter, r *http.Request, owner string) {
	id := r.PathValue("conversation_id")
	var req AddItemsRequest
	if err := httpjson.Decode(w, r, h.cfg.maxBytes, &req); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	if req.Items == nil {
		h.rd.Write(w, r, validation.Required("items"))
		return
	}
	if len(req.Items) == 0 {
		h.rd.Write(w, r, apierrors.InvalidRequest("items", "items must hold at least 1 item"))
		return
	}
	if err := checkItems(req.Items); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	items := responses.StoredItems(req.Items)
	if err := h.store.AppendItems(r.Context(), owner, id, items); err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, ""))
		return
	}
	h.write(w, r, newItemList(items, false))
}

// getItem serves GET /v1/conversations/{conversation_id}/items/{item_id}.
func (h *handler) getItem(w http.ResponseWriter, r *http.Request, owner string) {
	id, itemID := r.PathValue("conversation_id"), r.PathValue("item_id")
	it, err := h.store.GetItem(r.Context(), owner, id, itemID)
	if err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, itemID))
		return
	}
	h.write(w, r, it)
}

// deleteItem serves DELETE
// /v1/conversations/{conversation_id}/items/{item_id}: it answers the
// conversation.
func (h *handler) deleteItem(w http.ResponseWriter, r *http.Request, owner string) {
	id, itemID := r.PathValue("conversation_id"), r.PathValue("item_id")
	c, err := h.store.DeleteItem(r.Context(), owner, id, itemID)
	if err != nil {
		h.rd.Write(w, r, h.storeError(r.Context(), err, id, itemID))
		return
	}
	h.write(w, r, c)
}

// write answers v as JSON, status 200; a conversation's nil metadata as
// {}.
func (h *handler) write(w http.ResponseWriter, r *http.Request, v any) {
	if c, ok := v.(*Conversation); ok && c.Metadata == nil {
		cc := *c
		cc.Metadata = map[string]string{}
		v = &cc
	}
	body, err := json.Marshal(v)
	if err != nil {
		h.rd.Write(w, r, apierrors.Internal(err))
		return
	}
	httpjson.WriteRaw(w, http.StatusOK, body)
}

// storeError is the error to answer for err, an error of the store about
// conversation id (and item itemID, if set): 404 not_found for an
// unknown conversation or item, 400 for an item whose id the conversation
// holds already (param names the items' member), and for any other
// failure the error of an unavailable dependency (apierrors.FromDependency:
// 503 with Retry-After).
func (h *handler) storeError(ctx context.Context, err error, id, itemID string) error {
	var dup *responses.DuplicateItemError
	switch {
	case apierrors.Has(err):
		return err
	case errors.Is(err, ErrNotFound):
		return apierrors.NotFound("Conversation with id " + apierrors.Quote(id) + " not found.").WithCause(err)
	case errors.Is(err, ErrItemNotFound):
		return apierrors.NotFound("Item with id " + apierrors.Quote(itemID) + " not found.").WithCause(err)
	case errors.As(err, &dup):
		return apierrors.InvalidRequestf("items", "Duplicate item found with id %s. Remove duplicate items from your input and try again.", apierrors.Quote(dup.ID)).WithCause(err)
	}
	return apierrors.FromDependency(ctx, fmt.Errorf("conversations: store: %w", err))
}

// checkItems checks the items of a request: at most MaxItemsPerRequest,
// each as responses.CheckItems checks input items, and no two with the
// same id (a 400 naming the second).
func checkItems(items []responses.Item) error {
	if err := validation.MaxItems("items", len(items), MaxItemsPerRequest); err != nil {
		return err
	}
	if err := responses.CheckItems("items", items); err != nil {
		return err
	}
	seen := make(map[string]bool, len(items))
	for i := range items {
		id := items[i].ID
		if id == "" {
			continue
		}
		if seen[id] {
			at := "items[" + strconv.Itoa(i) + "].id"
			return apierrors.InvalidRequestf(at, "Duplicate item found with id %s. Remove duplicate items from your input and try again.", apierrors.Quote(id))
		}
		seen[id] = true
	}
	return nil
}

// checkMetadata checks metadata as OpenAI limits it: at most 16 pairs,
// keys of at most 64 characters and values of at most 512. Of several
// pairs at fault, the first by key is named.
func checkMetadata(m map[string]string) error {
	if err := validation.MaxItems("metadata", len(m), responses.MaxMetadataPairs); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		at := "metadata[" + k + "]"
		if err := validation.First(
			validation.MaxChars(at, k, responses.MaxMetadataKey),
			validation.MaxChars(at, m[k], responses.MaxMetadataValue),
		); err != nil {
			return err
		}
	}
	return nil
}
