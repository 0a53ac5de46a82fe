package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
)

// Pattern is the route served by [NewHandler], in ServeMux syntax: every
// method and path under /admin/v1/. The handler routes within it.
const Pattern = "/admin/v1/"

// Routes returns the route of h, normally the handler of [NewHandler]:
// [Pattern], for every method and every path under /admin/v1/, as a
// [route.Route] that any router can mount (chi: "/admin/v1/*").
func Routes(h http.Handler) []route.Route {
	return route.List(h, Pattern)
}

// Register registers h, normally the handler of [NewHandler], on mux
// under [Pattern], the route of [Routes]. Like mux.Handle, it panics if
// the pattern conflicts with one already registered.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

// KeyIDPrefix starts the id of every key that the handler creates.
const KeyIDPrefix = "key_"

// Store is what [NewHandler] needs of a key store: an [auth.KeyStore]
// whose keys can be created ([auth.KeyPutter]) and administered
// ([auth.KeyAdmin]). If it is also an [auth.UsageReader], GET
// /admin/v1/usage reads its usage; otherwise that route answers 404.
// [auth.MemoryKeyStore], the KeyStores of store/sqlite and store/postgres,
// and an [auth.CachedKeyStore] in front of any of them are Stores: pass
// the cached store that the gateway's middleware uses, so that a key
// deleted or changed here is seen by this process at once (by other
// processes within their cache's TTL).
type Store interface {
	auth.KeyStore
	auth.KeyPutter
	auth.KeyAdmin
}

type handler struct {
	keys    Store
	usage   auth.UsageReader // nil if keys records none
	cfg     config
	rd      apierrors.Renderer
	keyHash [sha256.Size]byte
	mux     *http.ServeMux
}

// NewHandler returns the handler of the admin API under [Pattern]:
//
//	POST   /admin/v1/keys          create a key; the reply alone shows its secret
//	GET    /admin/v1/keys          list keys (?limit=1..100, default 20; ?after=<id>)
//	GET    /admin/v1/keys/{id}     one key
//	PATCH  /admin/v1/keys/{id}     change its limits, budget, expiry, disabled
//	DELETE /admin/v1/keys/{id}     delete (revoke) it
//	GET    /admin/v1/usage         usage by day, model or key (see the package documentation)
//	POST   /admin/v1/sessions      mint an admin-console session, with [WithSessions]
//	OPTIONS any of them            CORS preflight
//
// Every request but a preflight must carry the admin key of
// [WithAdminKey] as a bearer token (401 missing_authorization or
// invalid_api_key otherwise). Every error is in the general envelope.
// NewHandler panics if keys is nil or no admin key is set. The handler
// is safe for concurrent use.
func NewHandler(keys Store, opts ...Option) http.Handler {
	if keys == nil {
		panic("admin: NewHandler: nil Store")
	}
	c := newConfig(opts)
	if c.adminKey == "" {
		panic("admin: NewHandler: no admin key (WithAdminKey)")
	}
	h := &handler{keys: keys, cfg: c, rd: apierrors.Renderer{Logger: c.logger}, keyHash: sha256.Sum256([]byte(c.adminKey))}
	h.usage, _ = keys.(auth.UsageReader)
	h.cfg.adminKey = "" // only its hash is kept
	mux := http.NewServeMux()
	mux.HandleFunc("POST /admin/v1/keys", h.create)
	mux.HandleFunc("GET /admin/v1/keys", h.list)
	mux.HandleFunc("GET /admin/v1/keys/{id}", h.get)
	mux.HandleFunc("PATCH /admin/v1/keys/{id}", h.patch)
	mux.HandleFunc("DELETE /admin/v1/keys/{id}", h.delete)
	mux.HandleFunc("GET /admin/v1/usage", h.readUsage)
	if c.sessions != nil {
		mux.HandleFunc("POST /admin/v1/sessions", h.createSession)
	}
	mux.HandleFunc("/", h.notFound)
	h.mux = mux
	return h
}

// The CORS headers: any origin may call the API, because it is
// authenticated by a bearer key that the caller must hold, never by a
// cookie that a browser would send on its own.
const (
	corsMethods = "GET, POST, PATCH, DELETE, OPTIONS"
	corsHeaders = "Authorization, Content-Type"
)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Access-Control-Allow-Origin", "*")
	hdr.Set("Cache-Control", "no-store")
	if r.Method == http.MethodOptions {
		hdr.Set("Access-Control-Allow-Methods", corsMethods)
		hdr.Set("Access-Control-Allow-Headers", corsHeaders)
		hdr.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err := h.authenticate(r); err != nil {
		h.rd.Write(w, r, err)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// authenticate checks the admin key, in constant time (the hashes of the
// two keys are compared, so neither their contents nor the length of the
// admin key leak through timing).
func (h *handler) authenticate(r *http.Request) error {
	v := r.Header.Get("Authorization")
	if v == "" {
		return challenge(apierrors.MissingAuthorization("You didn't provide the admin key. Send it in an Authorization header as Bearer <admin key>."), "Bearer")
	}
	scheme, token, ok := strings.Cut(v, " ")
	token = strings.TrimSpace(token)
	got := sha256.Sum256([]byte(token))
	if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], h.keyHash[:]) != 1 {
		return challenge(apierrors.InvalidAPIKey("Incorrect admin key provided."), `Bearer error="invalid_token"`)
	}
	return nil
}

func challenge(e *apierrors.Error, v string) *apierrors.Error {
	c := *e
	c.Header = http.Header{"Www-Authenticate": {v}}
	return &c
}

// notFound answers a path outside the API with 404, and a path of the
// API with a method it does not take with 405.
func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	var allow []string
	switch {
	case p == "/admin/v1/keys":
		allow = []string{http.MethodGet, http.MethodPost}
	case p == "/admin/v1/usage":
		allow = []string{http.MethodGet}
	case p == "/admin/v1/sessions" && h.cfg.sessions != nil:
		allow = []string{http.MethodPost}
	case strings.HasPrefix(p, "/admin/v1/keys/") && !strings.Contains(p[len("/admin/v1/keys/"):], "/") && len(p) > len("/admin/v1/keys/"):
		allow = []string{http.MethodGet, http.MethodPatch, http.MethodDelete}
	}
	if allow == nil {
		h.rd.Write(w, r, apierrors.NotFound(fmt.Sprintf("Unknown admin API path %s.", p)))
		return
	}
	h.rd.Write(w, r, apierrors.MethodNotAllowed(r.Method, p, allow))
}

// storeError turns an error of the store on the request of ctx into the
// client's: 404 for an unknown key, and otherwise what
// apierrors.FromDependency says (a 503 with Retry-After for an outage;
// its cause logged).
func storeError(ctx context.Context, err error, id string) error {
	if errors.Is(err, auth.ErrKeyNotFound) {
		return apierrors.NotFound(fmt.Sprintf("No API key with id %q.", id)).WithParam("id").WithCause(err)
	}
	return apierrors.FromDependency(ctx, fmt.Errorf("admin: key store: %w", err))
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	in, err := h.decodeKey(w, r, createFields)
	if err != nil {
		h.rd.Write(w, r, err)
		return
	}
	secret, err := auth.NewSecret()
	if err != nil {
		h.rd.Write(w, r, apierrors.Internal(fmt.Errorf("admin: minting a secret: %w", err)))
		return
	}
	k := auth.Key{ID: ids.New(KeyIDPrefix), Quota: auth.UnlimitedQuota()}
	in.apply(&k)
	if err := h.keys.PutKey(ctx, secret, k); err != nil {
		h.rd.Write(w, r, storeError(ctx, err, k.ID))
		return
	}
	stored, err := h.keys.GetKey(ctx, k.ID)
	if err != nil {
		h.rd.Write(w, r, storeError(ctx, err, k.ID))
		return
	}
	obj := keyObjectOf(stored)
	obj.Secret = secret
	_ = httpjson.Write(w, http.StatusCreated, obj)
}

func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	k, err := h.keys.GetKey(r.Context(), id)
	if err != nil {
		h.rd.Write(w, r, storeError(r.Context(), err, id))
		return
	}
	_ = httpjson.Write(w, http.StatusOK, keyObjectOf(k))
}

// The page sizes of GET /admin/v1/keys.
const (
	defaultListLimit = 20
	maxListLimit     = 100
)

func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := defaultListLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			h.rd.Write(w, r, apierrors.InvalidRequestf("limit", "limit must be an integer from 1 to %d, not %s.", maxListLimit, apierrors.Quote(v)))
			return
		}
		limit = n
	}
	keys, err := h.keys.ListKeys(r.Context(), auth.ListKeysParams{After: q.Get("after"), Limit: limit + 1})
	if err != nil {
		h.rd.Write(w, r, storeError(r.Context(), err, ""))
		return
	}
	reply := keyList{Object: "list", Data: make([]keyObject, 0, min(len(keys), limit))}
	reply.HasMore = len(keys) > limit
	for _, k := range keys[:min(len(keys), limit)] {
		reply.Data = append(reply.Data, keyObjectOf(k))
	}
	if n := len(reply.Data); n > 0 {
		reply.LastID = &reply.Data[n-1].ID
	}
	_ = httpjson.Write(w, http.StatusOK, &reply)
}

func (h *handler) patch(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	in, err := h.decodeKey(w, r, patchFields)
	if err != nil {
		h.rd.Write(w, r, err)
		return
	}
	k, err := h.keys.UpdateKey(r.Context(), id, func(k *auth.Key) error {
		in.apply(k)
		return nil
	})
	if err != nil {
		h.rd.Write(w, r, storeError(r.Context(), err, id))
		return
	}
	_ = httpjson.Write(w, http.StatusOK, keyObjectOf(k))
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := h.keys.DeleteKey(r.Context(), id); err != nil {
		h.rd.Write(w, r, storeError(r.Context(), err, id))
		return
	}
	_ = httpjson.Write(w, http.StatusOK, deletedKey{ID: id, Object: objectKey, Deleted: true})
}

// checkModels checks allowed_models against the catalog, if one is set.
func (h *handler) checkModels(ctx context.Context, list []string) error {
	if h.cfg.catalog == nil {
		return nil
	}
	for i, id := range list {
		_, err := h.cfg.catalog.Get(ctx, id)
		switch {
		case errors.Is(err, models.ErrNotFound):
			return apierrors.InvalidRequestf(fmt.Sprintf("allowed_models[%d]", i), "The model %s is not in the gateway's catalogue.", apierrors.Quote(id))
		case err != nil:
			return apierrors.Internal(fmt.Errorf("admin: catalogue: %w", err))
		}
	}
	return nil
}

func (h *handler) readUsage(w http.ResponseWriter, r *http.Request) {
	p, err := usageParams(r)
	if err != nil {
		h.rd.Write(w, r, err)
		return
	}
	if h.usage == nil {
		h.rd.Write(w, r, apierrors.NotFound("This gateway's key store does not record usage."))
		return
	}
	rows, err := h.usage.Usage(r.Context(), p)
	if errors.Is(err, errors.ErrUnsupported) {
		h.rd.Write(w, r, apierrors.NotFound("This gateway's key store does not record usage.").WithCause(err))
		return
	}
	if err != nil {
		h.rd.Write(w, r, storeError(r.Context(), err, ""))
		return
	}
	reply := usageList{Object: "list", GroupBy: string(p.GroupBy), Data: make([]usageRow, len(rows))}
	for i, row := range rows {
		reply.Data[i] = usageRow{Day: row.Day, Model: row.Model, KeyID: row.KeyID, Requests: row.Requests,
			InputTokens: row.InputTokens, OutputTokens: row.OutputTokens, CostUSD: roundUSD(row.CostUSD),
			CachedTokens: row.CachedTokens, CacheWriteTokens: row.CacheWriteTokens, ReasoningTokens: row.ReasoningTokens}
	}
	_ = httpjson.Write(w, http.StatusOK, &reply)
}

// usageParams reads the query of GET /admin/v1/usage.
func usageParams(r *http.Request) (auth.UsageParams, error) {
	q := r.URL.Query()
	p := auth.UsageParams{KeyID: q.Get("key_id"), Model: q.Get("model"), GroupBy: auth.UsageGroup(q.Get("group_by"))}
	if p.GroupBy == "" {
		p.GroupBy = auth.GroupByDay
	}
	if !p.GroupBy.Valid() {
		return p, apierrors.InvalidRequestf("group_by", "group_by must be day, model or key, not %s.", apierrors.Quote(string(p.GroupBy)))
	}
	var err error
	if p.From, err = parseBound(q.Get("from"), "from", false); err != nil {
		return p, err
	}
	if p.To, err = parseBound(q.Get("to"), "to", true); err != nil {
		return p, err
	}
	if !p.From.IsZero() && !p.To.IsZero() && !p.From.Before(p.To) {
		return p, apierrors.InvalidRequest("to", "to must be after from.")
	}
	return p, nil
}

// parseBound reads a bound of the usage's time range: a UTC day
// (YYYY-MM-DD), which as the end of the range includes that whole day,
// or an RFC 3339 time, taken as it is; empty means none.
func parseBound(v, param string, end bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.Parse(auth.DayLayout, v); err == nil {
		if end {
			d = d.AddDate(0, 0, 1)
		}
		return d, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, apierrors.InvalidRequestf(param, "%s must be a day (YYYY-MM-DD) or an RFC 3339 time, not %s.", param, apierrors.Quote(v))
	}
	return t, nil
}
