package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
)

// TestGatewayServesResponsesOverTheChatBackend: with Responses set to
// fromchat.New of the chat backend, one backend serves both families:
// the gateway's response store keeps the conversation, which reaches the
// chat backend whole; compaction is refused; a relayed model still goes
// to the relay's own responses backend.
func TestGatewayServesResponsesOverTheChatBackend(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "remote", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK}}}})
	require.NoError(t, err)
	g := newDemo(t, func(c *gateway.Config) {
		c.Responses = fromchat.New(c.Chat)
		ms, err := c.Catalog.List(context.Background())
		require.NoError(t, err)
		c.Catalog = models.NewMemoryCatalog(append(ms, models.Model{ID: "remote", OwnedBy: "upstream", Created: 1,
			EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})...)
		c.Relay = r
	})
	create := func(body string) *responses.Response {
		t.Helper()
		status, reply := do(t, g, "POST", "/v1/responses", "sk-demo", body)
		require.Equal(t, http.StatusOK, status, reply)
		var resp responses.Response
		require.NoError(t, json.Unmarshal([]byte(reply), &resp))
		return &resp
	}

	alone := create(`{"model":"demo-chat","input":"What is my name?"}`)
	first := create(`{"model":"demo-chat","input":"My name is Ada."}`)
	require.Contains(t, first.Output[0].Text(), `You said: "My name is Ada.".`, "the demo's chat reply")
	second := create(fmt.Sprintf(`{"model":"demo-chat","previous_response_id":%q,"input":"What is my name?"}`, first.ID))
	require.Equal(t, alone.Output[0].Text(), second.Output[0].Text())
	require.Equal(t, alone.Usage.InputTokens+first.Usage.TotalTokens, second.Usage.InputTokens,
		"the chat backend counted the first turn's input and output as well as the new input")

	status, reply := do(t, g, "POST", "/v1/responses/compact", "sk-demo", `{"model":"demo-chat","input":"hi"}`)
	require.Equal(t, http.StatusBadRequest, status, reply)
	require.Contains(t, reply, `"param":"model"`)

	before := len(up.Requests())
	create(`{"model":"remote","input":"hi"}`)
	require.Len(t, up.Requests(), before+1)
	require.Equal(t, "/v1/responses", up.Last().Path, "the relay's own responses backend")
}
