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
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// roundTripper answers every upstream request with a 200 event stream
// whose body is the fuzz input.
type roundTripper string

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(strings.NewReader(string(rt))),
		Request: r,
	}, nil
}

var fuzzSeeds = []string{
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"lo\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n" +
		"data: [DONE]\n\n",
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2,\"function\":{\"name\":\"g\"}}]}}]}\n\n" +
		"data: [DONE]\n\n",
	"data: {\"choices\":[{\"index\":0,\"text\":\"hi\",\"finish_reason\":null}]}\n\n: keep-alive\n\ndata: [DONE]\n\n",
	"event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n",
	"data: {\"error\":{\"message\":\"overloaded\"}}\n\n",
	"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n",
	"data: {\"choices\":[{\"index\":7,\"delta\":{\"content\":\"a\"}}]}\n\n",
	"data: {not json\n\n",
	"data: {\"choices\":[",
	"\xef\xbb\xbfdata: [DONE]\r\n\r\n",
	"",
	"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\"}}\n\n" +
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"hi\"}\n\n" +
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":1,\"item\":{\"type\":\"function_call\",\"name\":\"f\",\"call_id\":\"c\"}}\n\n" +
		"event: response.function_call_arguments.delta\ndata: {\"type\":\"response.function_call_arguments.delta\",\"output_index\":1,\"delta\":\"{}\"}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2,\"total_tokens\":3}}}\n\n",
	"data: {\"type\":\"response.incomplete\",\"response\":{\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n",
	"data: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"x\"}}}\n\n",
}

// FuzzStream feeds arbitrary upstream streams through the relay's chat,
// completions and responses backends and their handlers: nothing panics,
// and the client always gets a well-formed stream: for chat and
// completions, chunks that never carry an "error" key and then [DONE] or
// one error event; for responses, JSON events ending with one terminal
// event.
func FuzzStream(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, upstream string, n uint8) {
		choices := int(n%3) + 1
		r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.test/v1"}}}},
			relay.WithTransport(roundTripper(upstream)))
		require.NoError(t, err)
		catalog := models.NewMemoryCatalog(models.Model{ID: "m", EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
		for _, tc := range []struct {
			h    http.Handler
			path string
			body string
		}{
			{chat.NewHandler(catalog, r.Chat(), endpoint.WithKeepAlive(0)), "/v1/chat/completions",
				`{"model":"m","stream":true,"stream_options":{"include_usage":true},"n":` + string(rune('0'+choices)) + `,"messages":[{"role":"user","content":"hi"}]}`},
			{completions.NewHandler(catalog, r.Completions(), endpoint.WithKeepAlive(0)), "/v1/completions",
				`{"model":"m","stream":true,"n":` + string(rune('0'+choices)) + `,"prompt":"hi"}`},
			{responses.NewHandler(catalog, r.Responses(), endpoint.WithKeepAlive(0)), "/v1/responses",
				`{"model":"m","stream":true,"input":"hi"}`},
		} {
			w := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			tc.h.ServeHTTP(w, req)
			if w.Code != 200 {
				var body struct {
					Error struct {
						Code string `json:"code"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), w.Body.String())
				require.Contains(t, []string{"bad_gateway", "gateway_timeout"}, body.Error.Code, w.Body.String())
				continue
			}
			var evs []string
			var lastType, prevType string
			for ev, err := range sse.Read(w.Body) {
				require.NoError(t, err)
				evs = append(evs, ev.Data)
				prevType, lastType = lastType, ev.Type
			}
			require.NotEmpty(t, evs)
			if tc.path == "/v1/responses" {
				// One terminal event, then [DONE].
				require.Equal(t, sse.DoneData, evs[len(evs)-1], w.Body.String())
				require.Contains(t, []string{"response.completed", "response.incomplete", "response.failed"}, prevType, w.Body.String())
				for _, e := range evs[:len(evs)-1] {
					require.True(t, json.Valid([]byte(e)), e)
				}
				continue
			}
			last := evs[len(evs)-1]
			for i, e := range evs[:len(evs)-1] {
				var v map[string]json.RawMessage
				require.NoError(t, json.Unmarshal([]byte(e), &v), e)
				require.NotContains(t, v, "error", e)
				// Passed through or encoded, a chunk is the gateway's (as
				// encoding/json, matching keys case-insensitively, reads
				// it: chat chunks name the model, legacy ones do not),
				// and only the last one before [DONE] has a usage.
				var c struct {
					ID    string          `json:"id"`
					Model *string         `json:"model"`
					Usage json.RawMessage `json:"usage"`
				}
				require.NoError(t, json.Unmarshal([]byte(e), &c), e)
				if tc.path == "/v1/chat/completions" {
					require.True(t, strings.HasPrefix(c.ID, "chatcmpl-"), e)
					require.True(t, c.Model != nil && *c.Model == "m", e)
				} else {
					require.True(t, strings.HasPrefix(c.ID, "cmpl-"), e)
					require.Nil(t, c.Model, e)
				}
				if c.Usage != nil {
					require.Equal(t, len(evs)-2, i, "a usage in a chunk other than the last: %s", e)
				}
			}
			if last == sse.DoneData {
				continue
			}
			var v struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(last), &v), last)
			require.Contains(t, []string{"bad_gateway", "gateway_timeout"}, v.Error.Code, last)
		}
	})
}
