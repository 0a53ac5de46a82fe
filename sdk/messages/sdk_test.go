package messages_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// demoGateway is the demo gateway of the examples (keys sk-demo …) on a
// test server; it counts the requests it gets.
func demoGateway(t *testing.T, extra func(*gateway.Config)) (*httptest.Server, *counter) {
	t.Helper()
	f := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), f.Keys)
	require.NoError(t, err)
	text := demo.NewTextBackend(demo.WithTokensPerChunk(4))
	c := gateway.Config{Keys: keys, Catalog: models.NewMemoryCatalog(f.Models...), Chat: text.Chat()}
	if extra != nil {
		extra(&c)
	}
	g, err := gateway.New(c)
	require.NoError(t, err)
	n := new(counter)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		n.paths.Store(r.URL.Path, true)
		g.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, n
}

// counter counts a server's requests, and keeps their paths.
type counter struct {
	atomic.Int64
	paths sync.Map
}

func (c *counter) saw(path string) bool { _, ok := c.paths.Load(path); return ok }

// relayGateway is a gateway whose relay routes demo-chat to the gateway
// at upstream, speaking api, with the demo models in its catalogue.
func relayGateway(t *testing.T, upstream string, api relay.API) (*httptest.Server, *counter) {
	t.Helper()
	r, err := relay.New([]relay.Route{{Model: "demo-chat", Upstreams: []relay.Upstream{{BaseURL: upstream + "/v1", Key: "sk-demo", API: api}}}})
	require.NoError(t, err)
	return demoGateway(t, func(c *gateway.Config) {
		c.Relay = r
		c.Chat = nil // every chat request goes through the relay
	})
}

func sdkClient(base string, opts ...option.RequestOption) anthropic.Client {
	return anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(base), option.WithAPIKey("sk-demo"), option.WithMaxRetries(2)}, opts...)...)
}

// TestSDK drives the official Go client against the demo through
// gateway.New, and through a relay in front of such a gateway (in
// translation to its chat completions, and passed through to its
// /v1/messages).
func TestSDK(t *testing.T) {
	t.Parallel()
	direct, _ := demoGateway(t, nil)
	for _, tc := range []struct {
		name string
		api  relay.API // of the relay in front of the demo; "" for none
		path string    // the path the demo gateway serves the relay's requests on
	}{
		{"demo", "", ""},
		{"relay to chat completions", relay.APIOpenAI, "/v1/chat/completions"},
		{"relay passing through", relay.APIAnthropic, "/v1/messages"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := direct.URL
			up := new(counter)
			if tc.api != "" {
				var upSrv *httptest.Server
				upSrv, up = demoGateway(t, nil)
				front, _ := relayGateway(t, upSrv.URL, tc.api)
				base = front.URL
			}
			sdkMessage(t, sdkClient(base))
			sdkBearer(t, base)
			sdkStream(t, sdkClient(base))
			sdkToolRoundTrip(t, sdkClient(base))
			if tc.path != "" {
				require.True(t, up.saw(tc.path), "the upstream got %s", tc.path)
				require.EqualValues(t, 5, up.Load(), "one upstream request per client request")
			}
		})
	}
}

const wantReply = `You said: "Hello there". This is the gatewaykit demo model, counting to twenty: one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen, fourteen, fifteen, sixteen, seventeen, eighteen, nineteen, twenty.`

func helloParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Hello there"))},
	}
}

func sdkMessage(t *testing.T, c anthropic.Client) {
	msg, err := c.Messages.New(t.Context(), helloParams())
	require.NoError(t, err)
	require.Len(t, msg.Content, 1)
	require.Equal(t, "text", msg.Content[0].Type)
	require.Equal(t, wantReply, msg.Content[0].Text)
	require.Equal(t, anthropic.StopReasonEndTurn, msg.StopReason)
	require.Equal(t, "demo-chat", string(msg.Model))
	require.True(t, strings.HasPrefix(msg.ID, "msg_"), msg.ID)
	require.EqualValues(t, 2, msg.Usage.InputTokens)
	require.EqualValues(t, 59, msg.Usage.OutputTokens)
}

// sdkBearer: recent clients send the key as Authorization: Bearer.
func sdkBearer(t *testing.T, base string) {
	c := anthropic.NewClient(option.WithBaseURL(base), option.WithAuthToken("sk-demo"))
	msg, err := c.Messages.New(t.Context(), helloParams())
	require.NoError(t, err)
	require.Equal(t, wantReply, msg.Content[0].Text)
}

func sdkStream(t *testing.T, c anthropic.Client) {
	stream := c.Messages.NewStreaming(t.Context(), helloParams())
	var acc anthropic.Message
	events := 0
	for stream.Next() {
		events++
		require.NoError(t, acc.Accumulate(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.NoError(t, stream.Close())
	require.Greater(t, events, 6, "the reply comes in several deltas")
	require.Len(t, acc.Content, 1)
	require.Equal(t, wantReply, acc.Content[0].Text)
	require.Equal(t, anthropic.StopReasonEndTurn, acc.StopReason)
	require.EqualValues(t, 2, acc.Usage.InputTokens)
	require.EqualValues(t, 59, acc.Usage.OutputTokens)
}

func sdkToolRoundTrip(t *testing.T, c anthropic.Client) {
	params := anthropic.MessageNewParams{
		Model:     "demo-chat",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the weather in Paris?"))},
		Tools: []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: map[string]any{"city": map[string]any{"type": "string"}},
			Required:   []string{"city"},
		}, "get_weather")},
		ToolChoice: anthropic.ToolChoiceParamOfTool("get_weather"),
	}
	// The call, streamed and accumulated.
	stream := c.Messages.NewStreaming(t.Context(), params)
	var acc anthropic.Message
	for stream.Next() {
		require.NoError(t, acc.Accumulate(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.Equal(t, anthropic.StopReasonToolUse, acc.StopReason)
	require.Len(t, acc.Content, 1)
	use := acc.Content[0].AsToolUse()
	require.Equal(t, "get_weather", use.Name)
	require.JSONEq(t, `{"city":"What is the weather in Paris?"}`, string(use.Input))
	require.NotEmpty(t, use.ID)

	// The result, answered as JSON.
	params.Messages = append(params.Messages, acc.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(use.ID, "Sunny, 21°C", false)))
	params.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
	msg, err := c.Messages.New(t.Context(), params)
	require.NoError(t, err)
	require.Equal(t, anthropic.StopReasonEndTurn, msg.StopReason)
	require.Len(t, msg.Content, 1)
	require.True(t, strings.HasPrefix(msg.Content[0].Text, `The tool returned: "Sunny, 21°C".`), msg.Content[0].Text)
}

// TestSDKErrors: the client reads the format's errors, and does not retry
// what cannot succeed.
func TestSDKErrors(t *testing.T) {
	t.Parallel()
	direct, n := demoGateway(t, nil)
	relayed, rn := relayGateway(t, direct.URL, relay.APIOpenAI)
	for _, via := range []struct {
		name string
		srv  *httptest.Server
		n    *counter
	}{{"demo", direct, n}, {"relay", relayed, rn}} {
		t.Run(via.name, func(t *testing.T) { sdkErrors(t, via.srv, via.n) })
	}
}

func sdkErrors(t *testing.T, srv *httptest.Server, n *counter) {
	for _, tc := range []struct {
		name   string
		client anthropic.Client
		model  string
		status int
		typ    string
	}{
		{"unknown model", sdkClient(srv.URL), "no-such-model", 404, "not_found_error"},
		{"model without compat", sdkClient(srv.URL), "demo-video", 400, "invalid_request_error"},
		{"bad key", sdkClient(srv.URL, option.WithAPIKey("sk-nope")), "demo-chat", 401, "authentication_error"},
		{"empty quota", sdkClient(srv.URL, option.WithAPIKey("sk-demo-empty")), "demo-chat", 403, "permission_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := n.Load()
			p := helloParams()
			p.Model = anthropic.Model(tc.model)
			_, err := tc.client.Messages.New(t.Context(), p)
			var apiErr *anthropic.Error
			require.True(t, errors.As(err, &apiErr), "%v", err)
			require.Equal(t, tc.status, apiErr.StatusCode)
			require.Contains(t, apiErr.RawJSON(), `"type":"`+tc.typ+`"`)
			require.Equal(t, int64(1), n.Load()-before, "not retried")

			// The same error before a stream starts: a JSON reply.
			before = n.Load()
			stream := tc.client.Messages.NewStreaming(t.Context(), p)
			require.False(t, stream.Next())
			require.True(t, errors.As(stream.Err(), &apiErr), "%v", stream.Err())
			require.Equal(t, tc.status, apiErr.StatusCode)
			require.Equal(t, int64(1), n.Load()-before, "not retried")
		})
	}
}
