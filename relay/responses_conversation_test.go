package relay_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
)

// TestResponsesConversationOfTheGateway: a response that names a
// conversation of the gateway's store is relayed as the conversation's
// items followed by the input, without the gateway's item ids, and
// without "conversation", which the upstream does not know; the reply's
// input and output are added to the gateway's conversation.
func TestResponsesConversationOfTheGateway(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "pub-ok", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Model: "ok"}}}})
	require.NoError(t, err)
	catalog := models.NewMemoryCatalog(models.Model{ID: "pub-ok", EndpointTypes: []models.EndpointType{models.CompatResponse}})
	store := conversations.NewMemoryStore(nil)
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(catalog, r.Responses(), responses.WithConversations(store)))
	conversations.Register(mux, conversations.NewHandler(store))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	post := func(path, body string) map[string]any {
		t.Helper()
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer res.Body.Close()
		var v map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&v))
		require.Equal(t, 200, res.StatusCode, "%v", v)
		return v
	}

	id := post("/v1/conversations", `{"items":[{"role":"user","content":"My colour is teal."}]}`)["id"].(string)
	for i, conv := range []string{`"` + id + `"`, `{"id":"` + id + `"}`} {
		resp := post("/v1/responses", `{"model":"pub-ok","input":"What is it?","conversation":`+conv+`}`)
		require.Equal(t, map[string]any{"id": id}, resp["conversation"])

		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(up.Last().Body, &got))
		require.NotContains(t, got, "conversation", "the upstream does not know the gateway's conversations")
		require.Equal(t, "false", string(got["store"]))
		var input []map[string]any
		require.NoError(t, json.Unmarshal(got["input"], &input))
		require.Len(t, input, 1+2*i+1, "the conversation's items, then the input")
		require.Equal(t, []any{map[string]any{"type": "input_text", "text": "My colour is teal."}}, input[0]["content"])
		for _, it := range input {
			require.NotContains(t, it, "id", "the gateway's item ids stay at the gateway")
		}
		require.Equal(t, "What is it?", input[len(input)-1]["content"])
	}
	items, err := store.ConversationItems(t.Context(), "anonymous", id, 100)
	require.NoError(t, err)
	require.Len(t, items, 5, "the first item, and the input and output of each response")
}
