package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/gateway"
)

// TestGatewayServesConversations: with Responses, the gateway mounts
// /v1/conversations over ConversationStore, and POST /v1/responses
// continues its conversations; other methods are a JSON 405.
func TestGatewayServesConversations(t *testing.T) {
	t.Parallel()
	store := conversations.NewMemoryStore(nil)
	g := newDemo(t, func(c *gateway.Config) { c.ConversationStore = store })

	status, body := do(t, g, "POST", "/v1/conversations", "sk-demo", `{"items":[{"role":"user","content":"My name is Ada."}]}`)
	require.Equal(t, http.StatusOK, status, body)
	var conv conversations.Conversation
	require.NoError(t, json.Unmarshal([]byte(body), &conv))

	status, body = do(t, g, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"Who am I?","conversation":"`+conv.ID+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `Earlier you said: \"My name is Ada.\"`)

	items, err := store.ConversationItems(context.Background(), "owner:demo", conv.ID, 10)
	require.NoError(t, err, "the store of the Config holds it, under the key's account")
	require.Len(t, items, 3)

	status, body = do(t, g, "GET", "/v1/conversations/"+conv.ID+"/items", "sk-demo-empty", "")
	require.Equal(t, http.StatusOK, status, "another key of the account, whose quota is spent, reads: %s", body)
	status, body = do(t, g, "POST", "/v1/conversations/"+conv.ID+"/items", "sk-demo-empty", `{"items":[{"role":"user","content":"hi"}]}`)
	require.Equal(t, http.StatusForbidden, status, "adding items spends: %s", body)

	status, body = do(t, g, "PUT", "/v1/conversations/"+conv.ID, "sk-demo", "")
	require.Equal(t, http.StatusMethodNotAllowed, status)
	require.Contains(t, body, `"method_not_allowed"`)
}

// TestGatewayConversationsNeedResponses: without Responses there are no
// conversations.
func TestGatewayConversationsNeedResponses(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) { c.Responses = nil })
	status, _ := do(t, g, "POST", "/v1/conversations", "sk-demo", `{}`)
	require.Equal(t, http.StatusNotFound, status)
}

// failingConversations is the memory conversation store with a database
// behind it that does not answer.
type failingConversations struct{ *conversations.MemoryStore }

func (failingConversations) Ping(context.Context) error { return errors.New("connection refused") }

// TestGatewayReadinessAsksTheConversationStore: /readyz names the
// conversation store when it does not answer.
func TestGatewayReadinessAsksTheConversationStore(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) { c.ConversationStore = failingConversations{conversations.NewMemoryStore(nil)} })
	status, body := do(t, g, "GET", "/readyz", "", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "Not ready: conversations did not answer.")
}
