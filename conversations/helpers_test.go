package conversations_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/responses"
)

// normalizeIDs replaces the random ids of conversations, items and
// responses in raw reply text with "<prefix>*".
var normalizeIDs = golden.NormalizeIDs("conv_", "resp_", "msg_", "fc_", "fco_", "rs_", "call_", "cmp_", "item_")

// gateway is what the tests drive: the conversations handler and the
// responses handler (the demo backend) on one mux, over one store, with
// the fixed clock.
type gateway struct {
	h     http.Handler
	store conversations.Store
}

func newGateway(t testing.TB, opts ...conversations.Option) *gateway {
	t.Helper()
	return newGatewayWith(t, conversations.NewMemoryStore(nil), opts...)
}

func newGatewayWith(t testing.TB, store conversations.Store, opts ...conversations.Option) *gateway {
	t.Helper()
	mux := http.NewServeMux()
	h := conversations.NewHandler(store, append([]conversations.Option{conversations.WithClock(endpointtest.FixedClock)}, opts...)...)
	conversations.Register(mux, h)
	// The other methods and paths under /v1/conversations too, which the
	// handler answers with its JSON 405 and 404.
	mux.Handle("/v1/conversations", h)
	mux.Handle("/v1/conversations/", h)
	responses.Register(mux, responses.NewHandler(endpointtest.Catalog(), demo.NewTextBackend(demo.WithTokensPerChunk(8)).Responses(),
		endpoint.WithClock(endpointtest.FixedClock), responses.WithConversations(store)))
	return &gateway{h: mux, store: store}
}

// do sends a request to the gateway, with the JSON content type when
// body is not empty, as alice (key key_alice of account alice) unless
// mods say otherwise.
func (g *gateway) do(t testing.TB, method, path, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	return endpointtest.Do(t, g.h, method, path, body, append([]func(*http.Request){as("key_alice", "alice")}, mods...)...)
}

// as runs a request as the given key of the given account.
func as(keyID, owner string) func(*http.Request) {
	return func(r *http.Request) {
		*r = *r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{KeyID: keyID, Owner: owner}))
	}
}

// ok checks that w is a 200 JSON answer and decodes it into a map.
func ok(t testing.TB, w *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var v map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &v), w.Body.String())
	return v
}

// create creates a conversation with body and returns its id.
func (g *gateway) create(t testing.TB, body string) string {
	t.Helper()
	return ok(t, g.do(t, http.MethodPost, "/v1/conversations", body))["id"].(string)
}

// items lists every item of conversation id, oldest first.
func (g *gateway) items(t testing.TB, id string) []map[string]any {
	t.Helper()
	list := ok(t, g.do(t, http.MethodGet, "/v1/conversations/"+id+"/items?order=asc&limit=100", ""))
	out := []map[string]any{}
	for _, it := range list["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// errorBody is the general error body with the given fields; an empty
// param is null.
var errorBody = endpointtest.ErrorBody

// userMessages returns a JSON array of n user messages.
func userMessages(n int) string {
	b := []byte("[")
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"role":"user","content":"message %d"}`, i)
	}
	return string(append(b, ']'))
}
