package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// absurdUpstream answers every format with a usage that claims 2⁶³−1
// input tokens and -5 output tokens (and a total of -5).
func absurdUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	const big = "9223372036854775807"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		stream := bytes.Contains(b, []byte(`"stream":true`))
		event := func(data string) { fmt.Fprintf(w, "data: %s\n\n", data) }
		switch {
		case r.URL.Path == "/v1/chat/completions" && stream:
			w.Header().Set("Content-Type", "text/event-stream")
			event(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
			event(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":` + big + `,"completion_tokens":-5,"total_tokens":-5}}`)
			event(`[DONE]`)
		case r.URL.Path == "/v1/chat/completions":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":`+big+`,"completion_tokens":-5,"total_tokens":-5}}`)
		case r.URL.Path == "/v1/completions":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":"hi","finish_reason":"stop"}],"usage":{"prompt_tokens":`+big+`,"completion_tokens":-5,"total_tokens":-5}}`)
		case r.URL.Path == "/v1/responses":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"resp_x","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hi","annotations":[]}]}],"usage":{"input_tokens":`+big+`,"output_tokens":-5,"total_tokens":-5}}`)
		case r.URL.Path == "/v1/messages":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_x","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":`+big+`,"cache_read_input_tokens":`+big+`,"output_tokens":-5}}`)
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":`+big+`,"candidatesTokenCount":-5,"thoughtsTokenCount":`+big+`,"totalTokenCount":-5}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAbsurdUpstreamUsage reproduces an upstream whose usage made a
// request free and locked its key out: 2⁶³−1 and -5 tokens gave the
// client a total of -2 (or -5), the settlement failed, nothing was
// billed and the reservation was never released, so every later request
// was refused with 403. Now each count is taken from 0 to
// endpoint.MaxOutputTokens: the client sees a sane total, the key is
// charged it, its reservation is released, and the claim is logged with
// the model and the upstream, never a key.
func TestAbsurdUpstreamUsage(t *testing.T) {
	t.Parallel()
	const budget = 1 << 40
	const limit = endpoint.MaxOutputTokens
	chatBody := `{"model":%q,"messages":[{"role":"user","content":"hi"}]}`
	chatStream := `{"model":%q,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name, model, path, body string
		// input and output are what the client sees and the key is charged;
		// cached and reasoning their parts, in the usage row.
		input, output, cached, reasoning int64
	}{
		{"Chat", "m-openai", "/v1/chat/completions", chatBody, limit, 0, 0, 0},
		{"ChatStream", "m-openai", "/v1/chat/completions", chatStream, limit, 0, 0, 0},
		{"Completions", "m-openai", "/v1/completions", `{"model":%q,"prompt":"hi"}`, limit, 0, 0, 0},
		{"Responses", "m-openai", "/v1/responses", `{"model":%q,"input":"hi"}`, limit, 0, 0, 0},
		{"ChatFromAnthropic", "m-anthropic", "/v1/chat/completions", chatBody, limit, 0, limit, 0},
		{"ResponsesFromAnthropic", "m-anthropic", "/v1/responses", `{"model":%q,"input":"hi"}`, limit, 0, limit, 0},
		{"ChatFromGemini", "m-gemini", "/v1/chat/completions", chatBody, limit, limit, 0, limit},
		{"ResponsesFromGemini", "m-gemini", "/v1/responses", `{"model":%q,"input":"hi"}`, limit, limit, 0, limit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := absurdUpstream(t)
			var logs bytes.Buffer
			r, err := relay.New([]relay.Route{
				{Model: "m-openai", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: upstreamKey}}},
				{Model: "m-anthropic", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: upstreamKey, API: relay.APIAnthropic}}},
				{Model: "m-gemini", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1beta", Key: upstreamKey, API: relay.APIGemini}}},
			}, relay.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
			require.NoError(t, err)
			keys := auth.NewMemoryKeyStore()
			require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "k", Quota: auth.LimitedQuota(budget)}))
			var list []models.Model
			for _, id := range []string{"m-openai", "m-anthropic", "m-gemini"} {
				list = append(list, models.Model{ID: id, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse},
					Pricing: &models.Pricing{InputPerMillion: 1e6, OutputPerMillion: 1e6}})
			}
			catalog := models.NewMemoryCatalog(list...)
			mux := http.NewServeMux()
			chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
			completions.Register(mux, completions.NewHandler(catalog, r.Completions()))
			responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
			done := make(chan struct{}, 4)
			srv := httptest.NewServer(auth.Middleware(keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() { done <- struct{}{} }()
				mux.ServeHTTP(w, r)
			})))
			t.Cleanup(srv.Close)
			post := func() (int, []byte) {
				req, err := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(fmt.Sprintf(tc.body, tc.model)))
				require.NoError(t, err)
				req.Header.Set("Authorization", "Bearer "+clientKey)
				res, err := srv.Client().Do(req)
				require.NoError(t, err)
				defer res.Body.Close()
				b, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				<-done
				return res.StatusCode, b
			}

			status, body := post()
			require.Equal(t, http.StatusOK, status, "%s", body)
			require.Equal(t, [3]int64{tc.input, tc.output, tc.input + tc.output}, usageOf(t, body), "the client's usage: %s", body)

			k, err := keys.Lookup(t.Context(), clientKey)
			require.NoError(t, err)
			want := auth.Quota{Remaining: budget - tc.input - tc.output, Used: tc.input + tc.output, CostUSD: float64(tc.input + tc.output)}
			require.Equal(t, want, k.Quota, "charged the clamped usage, the reservation released")
			rows, err := keys.Usage(t.Context(), auth.UsageParams{GroupBy: auth.GroupByModel})
			require.NoError(t, err)
			require.Equal(t, []auth.UsageRow{{Model: tc.model, Requests: 1, InputTokens: tc.input, OutputTokens: tc.output,
				CachedTokens: tc.cached, ReasoningTokens: tc.reasoning, CostUSD: float64(tc.input + tc.output)}}, rows)

			require.Contains(t, logs.String(), `"msg":"relay: upstream reported token counts out of range`)
			require.Contains(t, logs.String(), `9223372036854775807`, "the claim is logged")
			require.Contains(t, logs.String(), `"upstream":`)
			require.NotContains(t, logs.String(), upstreamKey)
			require.NotContains(t, logs.String(), clientKey)

			status, body = post()
			require.Equal(t, http.StatusOK, status, "the next request is served: %s", body)
		})
	}
}

// usageOf returns the input, output and total tokens of a reply's usage,
// or of the usage chunk of a stream.
func usageOf(t *testing.T, body []byte) [3]int64 {
	t.Helper()
	var u struct {
		Usage struct {
			PromptTokens, CompletionTokens, InputTokens, OutputTokens, TotalTokens int64
		}
	}
	decodeUsage := func(b []byte) {
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &raw), "%s", b)
		var members map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(raw["usage"], &members), "%s", b)
		fields := map[string]int64{}
		for k, v := range members {
			var n int64
			if json.Unmarshal(v, &n) == nil {
				fields[k] = n
			}
		}
		u.Usage.PromptTokens = fields["prompt_tokens"] + fields["input_tokens"]
		u.Usage.CompletionTokens = fields["completion_tokens"] + fields["output_tokens"]
		u.Usage.TotalTokens = fields["total_tokens"]
	}
	if !bytes.HasPrefix(body, []byte("data:")) {
		decodeUsage(body)
	} else {
		for ev, err := range sse.Read(bytes.NewReader(body)) {
			require.NoError(t, err)
			if strings.Contains(ev.Data, `"usage":{`) {
				decodeUsage([]byte(ev.Data))
			}
		}
	}
	return [3]int64{u.Usage.PromptTokens, u.Usage.CompletionTokens, u.Usage.TotalTokens}
}

// TestAccessAbsurdUpstreamUsage: the access points pass the upstream's
// reply through as it is, and charge its usage taken from 0 to
// endpoint.MaxOutputTokens per count; the reservation is released and the
// claim logged.
func TestAccessAbsurdUpstreamUsage(t *testing.T) {
	t.Parallel()
	up := absurdUpstream(t)
	var logs bytes.Buffer
	r, err := relay.New([]relay.Route{{Model: "chat-1", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: upstreamKey}}}},
		relay.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	require.NoError(t, err)
	srv, keys := serveAccessKeys(t, r)
	const budget = 1 << 40
	require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "big", Quota: auth.LimitedQuota(budget)}))
	for range 2 {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(`{"model":"chat-1","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`))
		require.NoError(t, err)
		req.Header.Set("X-Api-Key", clientKey)
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", b)
	}
	k, err := keys.Lookup(t.Context(), clientKey)
	require.NoError(t, err)
	// Each request: input 2³¹−1 plus cache reads 2³¹−1, output 0.
	require.Equal(t, auth.Quota{Remaining: budget - 4*endpoint.MaxOutputTokens, Used: 4 * endpoint.MaxOutputTokens, CostUSD: 4 * endpoint.MaxOutputTokens}, k.Quota)
	require.Contains(t, logs.String(), `"cache_read_input_tokens":9223372036854775807`)
	require.Contains(t, logs.String(), `"output_tokens":-5`)
	require.NotContains(t, logs.String(), upstreamKey)
}
