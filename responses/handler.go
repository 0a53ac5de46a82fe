package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes served by [NewHandler], in [http.ServeMux] syntax. [Register]
// registers all six.
const (
	// Pattern creates a response (spec §4.3).
	Pattern = "POST /v1/responses"
	// PatternCompact compacts a conversation.
	PatternCompact = "POST /v1/responses/compact"
	// PatternGet retrieves a stored response.
	PatternGet = "GET /v1/responses/{response_id}"
	// PatternDelete deletes a stored response.
	PatternDelete = "DELETE /v1/responses/{response_id}"
	// PatternInputItems lists the input items of a stored response.
	PatternInputItems = "GET /v1/responses/{response_id}/input_items"
	// PatternCancel cancels a background response.
	PatternCancel = "POST /v1/responses/{response_id}/cancel"
)

// MaxConversationDepth is the most earlier responses that a
// previous_response_id chain replays; older ones are left out of
// [Params.History].
const MaxConversationDepth = 1000

// Patterns returns every route of [NewHandler] (a new slice each call).
func Patterns() []string {
	return []string{Pattern, PatternCompact, PatternGet, PatternDelete, PatternInputItems, PatternCancel}
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
	backend Backend
	answer  Backend // backend, through the interceptors if any
	catalog models.Catalog
	cfg     config
	routes  *http.ServeMux // see newRoutes
}

// NewHandler returns the handler of every route of [Patterns], which it
// routes with a ServeMux of its own: mount it with [Register] (under a
// prefix, through http.StripPrefix). It decodes and validates requests, checks the model
// against catalog (spec §1, endpoint type compat-response), resolves the
// conversation of previous_response_id from the store ([WithStore]; by
// default an in-memory one), asks backend for the reply, answers with
// JSON or an SSE stream, stores the response unless the request says
// "store": false, and charges the reply's total tokens to the API key:
// it reserves an estimate before asking the backend ([auth.Reserve]; 403
// insufficient_quota when all of the key's quota is reserved) and settles
// it to the usage when the reply ends. See the package documentation for
// the wire details and the estimates.
//
// Mount it behind [auth.Middleware]:
//
//	responses.Register(mux, responses.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	pipeline.MustHave("responses", catalog, backend)
	h := &handler{backend: backend, catalog: catalog, cfg: newConfig(opts)}
	h.answer = intercept(backend, h.cfg.Chain)
	if b := h.cfg.background; b != nil && !b.h.CompareAndSwap(nil, h) {
		panic("responses: NewHandler: the Background serves another handler already")
	}
	h.routes = newRoutes(h)
	return h
}

// newRoutes returns the ServeMux that routes h's requests: each pattern
// of [Patterns] to its method, with PathValue("response_id"); any other
// method on those paths to a JSON 405 method_not_allowed that names the
// methods allowed (Allow), and any other path to a JSON 404 not_found.
func newRoutes(h *handler) *http.ServeMux {
	mux := http.NewServeMux()
	id := func(serve func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { serve(w, r, r.PathValue("response_id")) }
	}
	mux.HandleFunc(Pattern, h.create)
	mux.HandleFunc(PatternCompact, h.compact)
	mux.Handle(PatternGet, id(h.get)) // HEAD too
	mux.Handle(PatternDelete, id(h.delete))
	mux.Handle(PatternInputItems, id(h.inputItems)) // HEAD too
	mux.Handle(PatternCancel, id(h.cancel))
	notAllowed := func(allow string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { h.notAllowed(w, r, allow) }
	}
	mux.Handle("/v1/responses", notAllowed("POST"))
	mux.Handle("/v1/responses/{response_id}/input_items", notAllowed("GET, HEAD"))
	mux.Handle("/v1/responses/{response_id}/cancel", notAllowed("POST"))
	// compact is a segment where a response id may stand: the other
	// methods of PatternGet and PatternDelete on it are named here, and
	// the rest in the fallback of the id's path.
	mux.Handle("GET /v1/responses/compact", notAllowed("POST"))
	mux.Handle("DELETE /v1/responses/compact", notAllowed("POST"))
	mux.HandleFunc("/v1/responses/{response_id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("response_id") == "compact" {
			h.notAllowed(w, r, "POST")
			return
		}
		h.notAllowed(w, r, "GET, HEAD, DELETE")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.cfg.Fail(w, r, apierrors.NotFound(fmt.Sprintf("No responses route for %s %s.", apierrors.Echo(r.Method), apierrors.Echo(r.URL.Path))))
	})
	return mux
}

// notAllowed answers a method that the path does not take: 405
// method_not_allowed, naming the methods allowed in Allow and the message.
func (h *handler) notAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	h.cfg.Fail(w, r, &apierrors.Error{Status: http.StatusMethodNotAllowed, Type: apierrors.TypeInvalidRequest,
		Code: "method_not_allowed", Message: fmt.Sprintf("Method %s is not allowed here; use %s.", apierrors.Echo(r.Method), allow)})
}

// ServeHTTP serves the request through the handler's own ServeMux (see
// newRoutes): mounted with [Register], the request's path has already
// been matched to one of [Patterns], and matching it again costs a
// lookup; mounted some other way, the ServeMux still does the routing.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.routes.ServeHTTP(w, r)
	// The pattern of h.routes that served r (ServeMux sets r.Pattern),
	// unless a router before set the route.
	telemetry.SetRoute(r.Context(), r.Pattern)
}

// create serves POST /v1/responses, through pipeline.Serve.
func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	pipeline.Serve(&h.cfg.Config, h.catalog, models.CompatResponse, (*creator)(h), w, r)
}

// creator is the handler as the pipeline.Endpoint of POST /v1/responses.
type creator handler

// createCall is a request to POST /v1/responses on its way: the
// backend's params and the owner of the response.
type createCall struct {
	p     *Params
	owner string
}

// Decode reads and decodes the request body.
func (h *creator) Decode(w http.ResponseWriter, r *http.Request, req *Request) ([]byte, error) {
	return (*handler)(h).decode(w, r, req)
}

// Validate checks req; see validate. A background request needs the
// handler's Background and "store": true.
func (h *creator) Validate(req *Request) error {
	if err := validate(h.cfg.Validate, req); err != nil {
		return err
	}
	if req.InBackground() {
		switch {
		case h.cfg.background == nil:
			return apierrors.InvalidRequest("background", "Background responses are not enabled on this server.")
		case !req.Stored():
			return apierrors.InvalidRequest("background", msgBackgroundStore)
		}
	}
	return nil
}

// Model returns the model req names.
func (h *creator) Model(req *Request) string { return req.Model }

// Prepare resolves the conversation of req's previous_response_id, or
// the items of the conversation it names (see conversationHistory), and
// makes its Params; the estimate counts the conversation.
func (h *creator) Prepare(ctx context.Context, req *Request, m *models.Model, body []byte) (*createCall, int64, int64, error) {
	owner, history, past, err := (*handler)(h).conversation(ctx, req.PreviousResponseID)
	if err == nil && req.Conversation != nil {
		history, past, err = (*handler)(h).conversationHistory(ctx, owner, req)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	prompt := pipeline.PromptTokens(len(body)) + past
	c := &createCall{p: &Params{Request: req, Model: m, History: history, src: pipeline.NewSource(req, body)}, owner: owner}
	return c, prompt, pipeline.Estimate(prompt, 1, req.TokenLimit(), m), nil
}

// Streams reports whether the request asked for a stream.
func (h *creator) Streams(c *createCall) bool { return c.p.Request.Stream }

// Reply writes the JSON response, and stores it unless the request says
// "store": false.
func (h *creator) Reply(w http.ResponseWriter, r *http.Request, c *createCall) (pipeline.Usage, error) {
	ctx := r.Context()
	req := c.p.Request
	created := h.cfg.Now().Unix()
	res, err := h.answer.Complete(ctx, c.p)
	if err == nil {
		err = checkResult(res)
	}
	if err != nil {
		return pipeline.Usage{}, err
	}
	resp := newResponse(req, ids.New(IDPrefix), created)
	if res.Model != "" {
		resp.Model = res.Model
	}
	resp.Output = make([]OutputItem, 0, len(res.Output))
	for i := range res.Output {
		resp.Output = append(resp.Output, outputItem(&res.Output[i]))
	}
	usage := res.Usage
	(*handler)(h).end(resp, res.Incomplete, &usage)
	body, err := json.Marshal(resp)
	if err != nil {
		return pipeline.Usage{}, apierrors.Internal(err)
	}
	used := usage.charged()
	if err := (*handler)(h).save(ctx, c.owner, req, resp); err != nil {
		return used, err // generated, so charged; but not stored, which the client must know
	}
	httpjson.WriteRaw(w, http.StatusOK, body)
	return used, nil
}

// checkResult rejects a backend result that cannot be sent.
func checkResult(res *Result) error {
	if res == nil {
		return apierrors.Internal(errors.New("responses: backend returned a nil Result and no error"))
	}
	for i := range res.Output {
		o := &res.Output[i]
		switch {
		case o.Call != nil && o.Call.Name == "":
			return backendError("function call (output item %d) without a name", i)
		case o.Call == nil && (o.Reasoning != "" || o.EncryptedContent != "") && o.Text != "":
			return backendError("reasoning item (output item %d) with text", i)
		}
	}
	return nil
}

// decode reads and decodes a request body into v, and returns the
// body. It decodes once; when that fails, it decodes again
// through httpjson for an error message that says what is wrong.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, v json.Unmarshaler) ([]byte, error) {
	body, err := httpjson.ReadJSON(w, r, h.cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	// The decoders of Request and CompactRequest validate the JSON
	// themselves: calling them directly saves json.Unmarshal a pass.
	err = v.UnmarshalJSON(body)
	if err == nil {
		return body, httpjson.CheckObject(body, reflect.TypeOf(v))
	}
	if apierrors.Has(err) {
		return body, err
	}
	if err := httpjson.Unmarshal(body, v); err != nil {
		return nil, err
	}
	return nil, apierrors.InvalidRequest("", "request body could not be decoded").WithCause(err)
}

// newResponse returns the in_progress response to req, with its echoes.
func newResponse(req *Request, id string, created int64) *Response {
	resp := &Response{
		ID:                id,
		Object:            ObjectResponse,
		CreatedAt:         created,
		Status:            StatusInProgress,
		Instructions:      req.Instructions,
		MaxOutputTokens:   req.MaxOutputTokens,
		Model:             req.Model,
		Output:            []OutputItem{},
		ParallelToolCalls: req.Parallel(),
		Store:             req.Stored(),
		Temperature:       req.Temperature,
		TopP:              req.TopP,
		Tools:             req.Tools,
		Metadata:          req.Metadata,
	}
	if req.PreviousResponseID != "" {
		resp.PreviousResponseID = &req.PreviousResponseID
	}
	if req.Conversation != nil {
		resp.Conversation = &ConversationRef{ID: req.Conversation.ID}
	}
	if req.ToolChoice != nil {
		resp.ToolChoice = *req.ToolChoice
	} else {
		resp.ToolChoice.Mode = ToolChoiceAuto
	}
	if req.Text != nil {
		resp.Text = *req.Text
	}
	if resp.Text.Format == nil {
		resp.Text.Format = &TextFormat{Type: FormatText}
	}
	if resp.Tools == nil {
		resp.Tools = []Tool{}
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]string{}
	}
	return resp
}

// end gives resp its final status and usage: incomplete with reason if
// reason is set (its last item too, unless it is a function call, which is
// never cut), else completed.
func (h *handler) end(resp *Response, reason string, u *Usage) {
	*u = u.Normalized()
	resp.Usage = u
	if reason != "" {
		resp.Status = StatusIncomplete
		resp.IncompleteDetails = &IncompleteDetails{Reason: reason}
		if n := len(resp.Output); n > 0 && resp.Output[n-1].Type != ItemFunctionCall {
			resp.Output[n-1].Status = StatusIncomplete
		}
		return
	}
	resp.Status = StatusCompleted
	at := h.cfg.Now().Unix()
	resp.CompletedAt = &at
}

// outputItem makes the output item of o, with new ids.
func outputItem(o *Output) OutputItem {
	if c := o.Call; c != nil {
		callID := c.CallID
		if callID == "" {
			callID = ids.New(CallIDPrefix)
		}
		return OutputItem{Type: ItemFunctionCall, ID: ids.New(FunctionIDPrefix), Status: StatusCompleted,
			CallID: callID, Name: c.Name, Arguments: c.Arguments}
	}
	if o.Reasoning != "" || o.EncryptedContent != "" {
		it := OutputItem{Type: ItemReasoning, ID: o.ID, Status: StatusCompleted, Summary: summaryOf(o.Reasoning),
			EncryptedContent: o.EncryptedContent}
		if it.ID == "" {
			it.ID = ids.New(ReasoningIDPrefix)
		}
		return it
	}
	return OutputItem{Type: ItemMessage, ID: ids.New(MessageIDPrefix), Status: StatusCompleted, Role: RoleAssistant,
		Content: []OutputText{{Type: PartOutputText, Text: o.Text, Annotations: []json.RawMessage{}}}}
}

// summaryOf is the summary of a reasoning item whose summary text is
// text: one part, or none for no text (an item that carries only its
// encrypted content).
func summaryOf(text string) []SummaryText {
	if text == "" {
		return []SummaryText{}
	}
	return []SummaryText{{Type: PartSummary, Text: text}}
}

// save stores resp unless the request said "store": false, and then adds
// its input and output items to the request's conversation, if it names
// one and resp did not fail. If a store fails it returns the error to
// send instead of the response (see notStored and notAppended): a
// response that the client was told is stored must be found by a later
// GET, previous_response_id and conversation.
func (h *handler) save(ctx context.Context, owner string, req *Request, resp *Response) error {
	if !req.Stored() {
		return nil
	}
	input := StoredItems(req.Input.AsItems())
	sr := &StoredResponse{Owner: owner, Response: *resp, Input: input}
	if err := h.cfg.store.Put(ctx, sr); err != nil {
		return notStored(resp.ID, err)
	}
	if req.Conversation == nil || resp.Status == StatusFailed {
		return nil
	}
	return h.appendToConversation(ctx, owner, req, input, resp)
}

// notStored is the error of the response id that was generated (and is
// charged) but that the store failed to keep: a 500
// internal_server_error that says so, with "X-Should-Retry: false" so
// that the official SDKs do not send the request again on their own
// (which would charge it again) without the caller knowing.
func notStored(id string, cause error) *apierrors.Error {
	e := apierrors.New(apierrors.CodeInternal, "The response was generated and charged, but it could not be stored: "+
		"it cannot be retrieved, nor continued with previous_response_id. Sending the request again generates and charges a new response.").
		WithCause(fmt.Errorf("responses: storing response %s: %w", id, cause))
	e.Header = http.Header{"X-Should-Retry": {"false"}}
	return e
}

// conversation returns the owner of the request's stored responses and
// the conversation that ends with the owner's response previous (see
// history).
func (h *handler) conversation(ctx context.Context, previous string) (owner string, items []Item, past int64, err error) {
	owner, err = h.owner(ctx)
	if err != nil {
		return "", nil, 0, err
	}
	items, past, err = h.history(ctx, owner, previous)
	return owner, items, past, err
}

// history resolves the conversation that ends with owner's response id:
// the input and output items of each response of the chain, oldest first,
// and the total tokens that the usage of that last response reports (the
// conversation's size, for the estimate of the next request). An unknown
// (or foreign) id is a 400 naming previous_response_id; an ancestor that
// is no longer stored ends the chain there.
func (h *handler) history(ctx context.Context, owner, id string) ([]Item, int64, error) {
	if id == "" {
		return nil, 0, nil
	}
	var chain []*StoredResponse
	n := 0
	for id != "" && len(chain) < MaxConversationDepth {
		sr, err := h.cfg.store.Get(ctx, owner, id)
		switch {
		case errors.Is(err, ErrNotFound) && len(chain) == 0:
			return nil, 0, apierrors.InvalidRequestf("previous_response_id", "Previous response with id %s not found.", apierrors.Quote(id)).WithCause(err)
		case errors.Is(err, ErrNotFound):
			id = ""
			continue
		case err != nil:
			return nil, 0, storeError(ctx, err)
		}
		chain = append(chain, sr)
		n += len(sr.Input) + len(sr.Response.Output)
		id = ""
		if prev := sr.Response.PreviousResponseID; prev != nil {
			id = *prev
		}
	}
	items := make([]Item, 0, n)
	for i := len(chain) - 1; i >= 0; i-- {
		items = append(items, chain[i].Input...)
		for j := range chain[i].Response.Output {
			items = append(items, historyItem(&chain[i].Response.Output[j]))
		}
	}
	var tokens int64
	if u := chain[0].Response.Usage; u != nil {
		tokens = int64(max(u.InputTokens, 0)) + int64(max(u.OutputTokens, 0))
	}
	return items, tokens, nil
}

// historyItem turns an output item into the item a backend sees.
func historyItem(o *OutputItem) Item {
	it := Item{Type: o.Type, ID: o.ID, Status: string(o.Status)}
	switch o.Type {
	case ItemFunctionCall:
		it.CallID, it.Name, it.Arguments = o.CallID, o.Name, o.Arguments
		return it
	case ItemReasoning:
		summary, _ := json.Marshal(o.Summary) // plain strings: cannot fail
		it.Extra = map[string]json.RawMessage{"summary": summary}
		it.EncryptedContent = o.EncryptedContent
		return it
	}
	it.Role = o.Role
	parts := make([]ContentPart, len(o.Content))
	for i, c := range o.Content {
		parts[i] = ContentPart{Type: PartOutputText, Text: c.Text}
	}
	it.Content = PartsContent(parts...)
	return it
}

// storeError is the error of a Store that failed on the request of ctx
// (apierrors.FromDependency): an outage is a 503 with Retry-After.
func storeError(ctx context.Context, err error) error {
	return apierrors.FromDependency(ctx, fmt.Errorf("responses: store: %w", err))
}

// delete serves DELETE /v1/responses/{id}.
func (h *handler) delete(w http.ResponseWriter, r *http.Request, id string) {
	owner, err := h.owner(r.Context())
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	err = h.cfg.store.Delete(r.Context(), owner, id)
	hadRun, runErr := h.deleteRun(r.Context(), owner, id)
	if runErr != nil {
		h.cfg.Fail(w, r, storeError(r.Context(), runErr))
		return
	}
	if err != nil && !(hadRun && errors.Is(err, ErrNotFound)) {
		h.cfg.Fail(w, r, h.lookupError(r.Context(), err, id))
		return
	}
	_ = httpjson.Write(w, http.StatusOK, DeletedResponse{ID: id, Object: ObjectResponse, Deleted: true})
}

// stored returns the request's owner's stored response id, or the error
// to send (see owner and lookupError).
func (h *handler) stored(ctx context.Context, id string) (*StoredResponse, error) {
	owner, err := h.owner(ctx)
	if err != nil {
		return nil, err
	}
	sr, err := h.cfg.store.Get(ctx, owner, id)
	if err != nil {
		return nil, h.lookupError(ctx, err, id)
	}
	return sr, nil
}

// owner returns the owner of the request's stored responses, or a 401
// missing_authorization when the OwnerFunc refuses the request.
func (h *handler) owner(ctx context.Context) (string, error) {
	owner, ok := h.cfg.owner(ctx)
	if !ok {
		return "", apierrors.MissingAuthorization(msgNoOwner)
	}
	return owner, nil
}

// msgNoOwner is the message of a request that its OwnerFunc refuses.
const msgNoOwner = "This endpoint needs an authenticated caller (an API key in the Authorization header)."

func (h *handler) lookupError(ctx context.Context, err error, id string) error {
	if errors.Is(err, ErrNotFound) {
		return apierrors.NotFound("Response with id " + apierrors.Quote(id) + " not found.").WithCause(err)
	}
	return storeError(ctx, err)
}
