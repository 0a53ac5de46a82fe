package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// anthropicSeeds are messages-format streams: the reference's, and
// broken ones.
var anthropicSeeds = []string{
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":3}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x\"}}\n\n",
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"name\":\"\"}}\n\n",
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"late\"}}\n\n",
	"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
	"data: {not json\n\n",
	"",
}

// FuzzAnthropicStream feeds arbitrary upstream streams through the
// relay's translation of the messages format and the chat and responses
// handlers: nothing panics, the translation never breaks the handlers'
// stream rules (which they would answer with a 500), and the client gets
// chunks and [DONE] (for responses, events ending with one terminal
// event and [DONE]), or one error event of the upstream's failure.
func FuzzAnthropicStream(f *testing.F) {
	for _, s := range anthropicSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, upstream string) {
		r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.test/v1", API: relay.APIAnthropic}}}},
			relay.WithTransport(roundTripper(upstream)))
		require.NoError(t, err)
		catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}})
		h := chat.NewHandler(catalog, r.Chat(), endpoint.WithKeepAlive(0))
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(
			`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(w, req)
		var errBody struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		var evs []string
		if w.Code != 200 {
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &errBody), w.Body.String())
			require.Contains(t, []string{"bad_gateway", "gateway_timeout"}, errBody.Error.Code, w.Body.String())
		} else {
			for ev, err := range sse.Read(w.Body) {
				require.NoError(t, err)
				evs = append(evs, ev.Data)
			}
			require.NotEmpty(t, evs)
			last := evs[len(evs)-1]
			for _, e := range evs[:len(evs)-1] {
				var v map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(e), &v), e)
				require.NotContains(t, v, "error", e)
			}
			if last != sse.DoneData {
				require.NoError(t, json.Unmarshal([]byte(last), &errBody), last)
				require.Contains(t, []string{"bad_gateway", "gateway_timeout"}, errBody.Error.Code, last)
			}
		}

		// The responses backend reads the same stream: one terminal
		// event, then [DONE]; or a 502 before anything was sent.
		catalog = models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
		rh := responses.NewHandler(catalog, r.Responses(), endpoint.WithKeepAlive(0))
		w = httptest.NewRecorder()
		req = httptest.NewRequest(http.MethodPost, "/v1/responses", strings.NewReader(`{"model":"m","stream":true,"input":"hi"}`))
		req.Header.Set("Content-Type", "application/json")
		rh.ServeHTTP(w, req)
		if w.Code != 200 {
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &errBody), w.Body.String())
			require.Contains(t, []string{"bad_gateway", "gateway_timeout"}, errBody.Error.Code, w.Body.String())
			return
		}
		evs = evs[:0]
		var lastType, prevType string
		for ev, err := range sse.Read(w.Body) {
			require.NoError(t, err)
			evs = append(evs, ev.Data)
			prevType, lastType = lastType, ev.Type
		}
		require.NotEmpty(t, evs)
		require.Empty(t, lastType, "[DONE] is an unnamed event")
		require.Equal(t, sse.DoneData, evs[len(evs)-1], w.Body.String())
		require.Contains(t, []string{"response.completed", "response.incomplete", "response.failed"}, prevType, w.Body.String())
		require.NotContains(t, w.Body.String(), "internal_server_error")
	})
}

// FuzzAnthropicRequest translates arbitrary chat requests for an
// Anthropic-format upstream: nothing panics, and what goes upstream is
// one JSON object with the upstream's model and a max_tokens, or the
// client gets a 400.
func FuzzAnthropicRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}]}`,
		`{"model":"m","top_k":3,"user":"u","reasoning_effort":"high","max_tokens":10,"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required","parallel_tool_calls":false}`,
		`{"model":"m","n":2,"messages":[{"role":"user","content":"x"}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1"}}]}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var sent []byte
		rt := captureTransport{body: &sent}
		r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.test/v1", Model: "up", API: relay.APIAnthropic}}}},
			relay.WithTransport(rt))
		require.NoError(t, err)
		catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat}, Reasoning: true})
		h := chat.NewHandler(catalog, r.Chat())
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(w, req)
		if sent == nil {
			require.NotEqual(t, 200, w.Code)
			require.Less(t, w.Code, 500, w.Body.String())
			return
		}
		var up struct {
			Model     string `json:"model"`
			MaxTokens int    `json:"max_tokens"`
		}
		require.NoError(t, json.Unmarshal(sent, &up), string(sent))
		require.Equal(t, "up", up.Model)
		require.Positive(t, up.MaxTokens)
	})
}

// captureTransport keeps the body of the request it gets, and answers
// 400 in the messages format.
type captureTransport struct{ body *[]byte }

func (c captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b := new(strings.Builder)
	if r.Body != nil {
		_, _ = io.Copy(b, r.Body)
	}
	*c.body = []byte(b.String())
	return &http.Response{
		StatusCode: 400, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"application/json"}},
		Body:    io.NopCloser(strings.NewReader(`{"type":"error","error":{"type":"invalid_request_error","message":"no"}}`)),
		Request: r,
	}, nil
}
