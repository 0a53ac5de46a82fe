package conversations_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// TestErrors checks every error of every route: its status and its whole
// body, in the general shape.
func TestErrors(t *testing.T) {
	t.Parallel()
	const badRequest, notFound = "invalid_request_error", "not_found"
	long := strings.Repeat("k", 65)
	cases := []struct {
		name, method, path, body string
		status                   int
		message, param, code     string
	}{
		// POST /v1/conversations
		{"create: not an object", "POST", "/v1/conversations", `[]`, 400,
			"request body must be a JSON object, got array", "", badRequest},
		{"create: items not an array", "POST", "/v1/conversations", `{"items":"hello"}`, 400,
			"items must be an array, got string", "items", badRequest},
		{"create: too many items", "POST", "/v1/conversations", `{"items":` + userMessages(21) + `}`, 400,
			"items must hold at most 20 items", "items", badRequest},
		{"create: item without a type", "POST", "/v1/conversations", `{"items":[{"content":"hi"}]}`, 400,
			"items[0].type is required", "items[0].type", badRequest},
		{"create: message without content", "POST", "/v1/conversations", `{"items":[{"role":"user","content":"hi"},{"type":"message","role":"user"}]}`, 400,
			"items[1].content is required", "items[1].content", badRequest},
		{"create: unknown role", "POST", "/v1/conversations", `{"items":[{"role":"robot","content":"hi"}]}`, 400,
			"items[0].role must be one of user, assistant, system, developer, got \"robot\"", "items[0].role", badRequest},
		{"create: function call without a name", "POST", "/v1/conversations", `{"items":[{"type":"function_call","call_id":"call_1","arguments":"{}"}]}`, 400,
			"items[0].name is required", "items[0].name", badRequest},
		{"create: items sharing an id", "POST", "/v1/conversations",
			`{"items":[{"id":"msg_1","role":"user","content":"a"},{"id":"msg_2","role":"user","content":"b"},{"id":"msg_1","role":"user","content":"c"}]}`, 400,
			"Duplicate item found with id \"msg_1\". Remove duplicate items from your input and try again.", "items[2].id", badRequest},
		{"create: too many metadata pairs", "POST", "/v1/conversations", `{"metadata":` + pairs(17) + `}`, 400,
			"metadata must hold at most 16 items", "metadata", badRequest},
		{"create: metadata key too long", "POST", "/v1/conversations", `{"metadata":{"` + long + `":"v"}}`, 400,
			"metadata[" + long + "] must hold at most 64 characters", "metadata[" + long + "]", badRequest},
		{"create: metadata value too long", "POST", "/v1/conversations", `{"metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`, 400,
			"metadata[k] must hold at most 512 characters", "metadata[k]", badRequest},
		{"create: metadata value not a string", "POST", "/v1/conversations", `{"metadata":{"k":1}}`, 400,
			"metadata must be a string, got number", "metadata", badRequest},
		{"create: a member twice", "POST", "/v1/conversations", `{"metadata":{},"metadata":{}}`, 400,
			"metadata must appear once in the request body", "metadata", badRequest},
		// GET, POST, DELETE /v1/conversations/{id}
		{"get: unknown", "GET", "/v1/conversations/conv_missing", "", 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		{"update: unknown", "POST", "/v1/conversations/conv_missing", `{"metadata":{}}`, 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		{"update: no metadata", "POST", "/v1/conversations/conv_missing", `{}`, 400,
			"metadata is required", "metadata", badRequest},
		{"update: null metadata", "POST", "/v1/conversations/conv_missing", `{"metadata":null}`, 400,
			"metadata is required", "metadata", badRequest},
		{"update: too many metadata pairs", "POST", "/v1/conversations/conv_missing", `{"metadata":` + pairs(17) + `}`, 400,
			"metadata must hold at most 16 items", "metadata", badRequest},
		{"delete: unknown", "DELETE", "/v1/conversations/conv_missing", "", 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		// GET, POST /v1/conversations/{id}/items
		{"list: unknown", "GET", "/v1/conversations/conv_missing/items", "", 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		{"list: limit 0", "GET", "/v1/conversations/conv_missing/items?limit=0", "", 400,
			"limit must be an integer from 1 to 100, got \"0\"", "limit", badRequest},
		{"list: limit 101", "GET", "/v1/conversations/conv_missing/items?limit=101", "", 400,
			"limit must be an integer from 1 to 100, got \"101\"", "limit", badRequest},
		{"list: limit not a number", "GET", "/v1/conversations/conv_missing/items?limit=ten", "", 400,
			"limit must be an integer from 1 to 100, got \"ten\"", "limit", badRequest},
		{"list: unknown order", "GET", "/v1/conversations/conv_missing/items?order=newest", "", 400,
			"order must be asc or desc, got \"newest\"", "order", badRequest},
		{"add: unknown", "POST", "/v1/conversations/conv_missing/items", `{"items":[{"role":"user","content":"hi"}]}`, 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		{"add: no items", "POST", "/v1/conversations/conv_missing/items", `{}`, 400,
			"items is required", "items", badRequest},
		{"add: empty items", "POST", "/v1/conversations/conv_missing/items", `{"items":[]}`, 400,
			"items must hold at least 1 item", "items", badRequest},
		{"add: too many items", "POST", "/v1/conversations/conv_missing/items", `{"items":` + userMessages(21) + `}`, 400,
			"items must hold at most 20 items", "items", badRequest},
		{"add: invalid image", "POST", "/v1/conversations/conv_missing/items",
			`{"items":[{"role":"user","content":[{"type":"input_image","image_url":"ftp://x"}]}]}`, 400,
			"items[0].content[0].image_url must be an http(s) URL or a data URI holding a base64 image (data:image/png;base64,…)", "items[0].content[0].image_url", badRequest},
		{"add: not JSON", "POST", "/v1/conversations/conv_missing/items", `{"items":`, 400,
			"request body is not valid JSON: unexpected end of input", "", badRequest},
		// GET, DELETE /v1/conversations/{id}/items/{item_id}
		{"get item: unknown conversation", "GET", "/v1/conversations/conv_missing/items/msg_1", "", 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		{"delete item: unknown conversation", "DELETE", "/v1/conversations/conv_missing/items/msg_1", "", 404,
			"Conversation with id \"conv_missing\" not found.", "", notFound},
		// methods and paths
		{"PUT /v1/conversations", "PUT", "/v1/conversations", "", 405,
			"The method PUT is not allowed on /v1/conversations; use POST.", "", "method_not_allowed"},
		{"PATCH a conversation", "PATCH", "/v1/conversations/conv_1", "", 405,
			"The method PATCH is not allowed on /v1/conversations/conv_1; use GET or HEAD or POST or DELETE.", "", "method_not_allowed"},
		{"DELETE the items", "DELETE", "/v1/conversations/conv_1/items", "", 405,
			"The method DELETE is not allowed on /v1/conversations/conv_1/items; use GET or HEAD or POST.", "", "method_not_allowed"},
		{"POST an item", "POST", "/v1/conversations/conv_1/items/msg_1", "{}", 405,
			"The method POST is not allowed on /v1/conversations/conv_1/items/msg_1; use GET or HEAD or DELETE.", "", "method_not_allowed"},
		{"another path", "GET", "/v1/conversations/conv_1/items/msg_1/more", "", 404,
			"No conversations route for GET /v1/conversations/conv_1/items/msg_1/more.", "", notFound},
	}
	g := newGateway(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := g.do(t, tc.method, tc.path, tc.body)
			typ := "invalid_request_error"
			endpointtest.RequireJSON(t, w, tc.status, errorBody(tc.message, typ, tc.param, tc.code))
		})
	}
}

// pairs returns a JSON object of n metadata pairs.
func pairs(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":"v"`)
	}
	b.WriteByte('}')
	return b.String()
}

// TestErrorsOfAConversation checks the errors that need a conversation:
// an unknown after, item, or an item id that the conversation holds.
func TestErrorsOfAConversation(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	id := g.create(t, `{"items":[{"id":"msg_1","role":"user","content":"hello"}]}`)
	base := "/v1/conversations/" + id
	cases := []struct {
		name, method, path, body string
		status                   int
		message, param, code     string
	}{
		{"list: unknown after", "GET", base + "/items?after=msg_missing", "", 400,
			"after names no item of conversation \"" + id + "\": \"msg_missing\"", "after", "invalid_request_error"},
		{"add: an id the conversation holds", "POST", base + "/items", `{"items":[{"role":"user","content":"a"},{"id":"msg_1","role":"user","content":"b"}]}`, 400,
			"Duplicate item found with id \"msg_1\". Remove duplicate items from your input and try again.", "items", "invalid_request_error"},
		{"get item: unknown", "GET", base + "/items/msg_missing", "", 404,
			"Item with id \"msg_missing\" not found.", "", "not_found"},
		{"delete item: unknown", "DELETE", base + "/items/msg_missing", "", 404,
			"Item with id \"msg_missing\" not found.", "", "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := g.do(t, tc.method, tc.path, tc.body)
			endpointtest.RequireJSON(t, w, tc.status, errorBody(tc.message, "invalid_request_error", tc.param, tc.code))
		})
	}
	require.Len(t, g.items(t, id), 1, "no error added an item")
}

// TestConversationsAreVisibleToTheirOwnerOnly: another account, and a
// request without a principal, see another owner's conversation as one
// that does not exist, on every route; another key of the same account
// sees it.
func TestConversationsAreVisibleToTheirOwnerOnly(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	id := g.create(t, `{"items":[{"id":"msg_1","role":"user","content":"hello"}],"metadata":{"topic":"mine"}}`)
	base := "/v1/conversations/" + id
	notFound := errorBody("Conversation with id \""+id+"\" not found.", "invalid_request_error", "", "not_found")
	routes := []struct{ method, path, body string }{
		{"GET", base, ""},
		{"POST", base, `{"metadata":{"topic":"theirs"}}`},
		{"GET", base + "/items", ""},
		{"POST", base + "/items", `{"items":[{"role":"user","content":"theirs"}]}`},
		{"GET", base + "/items/msg_1", ""},
		{"DELETE", base + "/items/msg_1", ""},
		{"DELETE", base, ""},
	}
	noPrincipal := func(r *http.Request) { *r = *r.WithContext(context.Background()) }
	for name, who := range map[string]func(*http.Request){"another account": as("key_bob", "bob"), "no principal": noPrincipal} {
		for _, rt := range routes {
			w := g.do(t, rt.method, rt.path, rt.body, who)
			require.Equal(t, http.StatusNotFound, w.Code, "%s: %s %s", name, rt.method, rt.path)
			require.JSONEq(t, notFound, w.Body.String(), "%s: %s %s", name, rt.method, rt.path)
		}
	}
	got := ok(t, g.do(t, http.MethodGet, base, "", as("key_alice2", "alice")))
	require.Equal(t, map[string]any{"topic": "mine"}, got["metadata"], "another key of the account sees it, unchanged")
	require.Len(t, g.items(t, id), 1)
}

// TestRefusedOwnerIsUnauthorized: an OwnerFunc that refuses the request
// makes every route a 401.
func TestRefusedOwnerIsUnauthorized(t *testing.T) {
	t.Parallel()
	refuse := func(context.Context) (string, bool) { return "", false }
	g := newGateway(t, conversations.WithOwner(refuse))
	for _, p := range conversations.Patterns() {
		method, path, _ := strings.Cut(p, " ")
		path = strings.NewReplacer("{conversation_id}", "conv_1", "{item_id}", "msg_1").Replace(path)
		w := g.do(t, method, path, "{}")
		endpointtest.RequireJSON(t, w, http.StatusUnauthorized, errorBody(
			"This endpoint needs an authenticated caller (an API key in the Authorization header).", "invalid_request_error", "", "missing_authorization"))
	}
}

// failingStore is a Store whose every method fails as an unreachable
// database does.
type failingStore struct{ conversations.Store }

var errDown = errors.New("connection refused")

func (failingStore) Create(context.Context, string, *conversations.Conversation, []responses.Item) error {
	return errDown
}
func (failingStore) Get(context.Context, string, string) (*conversations.Conversation, error) {
	return nil, errDown
}
func (failingStore) ListItems(context.Context, string, string, conversations.ItemQuery) ([]responses.Item, bool, error) {
	return nil, false, errDown
}
func (failingStore) ConversationItems(context.Context, string, string, int) ([]responses.Item, error) {
	return nil, errDown
}

// TestStoreFailureIsUnavailable: a store that fails is a 503
// service_unavailable with Retry-After, its error only logged, on the
// conversations routes and for the conversation of POST /v1/responses.
func TestStoreFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	g := newGatewayWith(t, failingStore{conversations.NewMemoryStore(nil)})
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/v1/conversations", `{}`},
		{"GET", "/v1/conversations/conv_1", ""},
		{"GET", "/v1/conversations/conv_1/items", ""},
		{"POST", "/v1/responses", `{"model":"demo-chat","input":"hi","conversation":"conv_1"}`},
	} {
		w := g.do(t, rq.method, rq.path, rq.body)
		require.Equal(t, http.StatusServiceUnavailable, w.Code, "%s %s: %s", rq.method, rq.path, w.Body)
		require.NotEmpty(t, w.Header().Get("Retry-After"))
		require.NotContains(t, w.Body.String(), "connection refused", "the store's error is not sent")
		require.Contains(t, w.Body.String(), `"code":"service_unavailable"`)
	}
}

// TestFullMemoryStoreRefusesItems: items that would make a conversation
// larger than the MemoryStore's MaxBytes are a 400 that says so, and are
// not added.
func TestFullMemoryStoreRefusesItems(t *testing.T) {
	t.Parallel()
	g := newGatewayWith(t, conversations.NewMemoryStore(&conversations.MemoryStoreOptions{MaxBytes: 1000}))
	id := g.create(t, `{}`)
	w := g.do(t, http.MethodPost, "/v1/conversations/"+id+"/items", `{"items":`+userMessages(20)+`}`)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `"param":"items"`)
	require.Contains(t, w.Body.String(), "more than this gateway keeps (1000 bytes in all)")
	require.Empty(t, g.items(t, id))
}
