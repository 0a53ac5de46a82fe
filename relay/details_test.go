package relay_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// cacheUpstream answers the messages format and the Gemini style with a
// usage that reads 50 prompt tokens from the provider's cache, writes 20
// (messages format only) and spends 3 output tokens reasoning (Gemini
// style only): 80 prompt tokens, 9 output tokens in all.
func cacheUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		stream := bytes.Contains(b, []byte(`"stream":true`))
		event := func(name, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data) }
		switch {
		case r.URL.Path == "/v1/messages" && stream:
			w.Header().Set("Content-Type", "text/event-stream")
			event("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":1}}}`)
			event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`)
			event("content_block_stop", `{"type":"content_block_stop","index":0}`)
			event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`)
			event("message_stop", `{"type":"message_stop"}`)
		case r.URL.Path == "/v1/messages":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":50,"output_tokens":9}}`)
		case strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\n\n", `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":80,"candidatesTokenCount":6,"totalTokenCount":89,"cachedContentTokenCount":50,"thoughtsTokenCount":3}}`)
		case strings.HasSuffix(r.URL.Path, ":generateContent"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":80,"candidatesTokenCount":6,"totalTokenCount":89,"cachedContentTokenCount":50,"thoughtsTokenCount":3}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// detailCounts are the counts of a usage, its details included, as a
// client reads them in either format.
type detailCounts struct{ Input, Output, Cached, CacheWrite, Reasoning int64 }

// detailsOf returns the counts of a reply's usage, or of the usage of a
// stream's last event that has one (the chat usage chunk, or
// response.completed).
func detailsOf(t *testing.T, body []byte) detailCounts {
	t.Helper()
	var c detailCounts
	decode := func(b []byte) {
		var v struct {
			Usage    json.RawMessage
			Response struct{ Usage json.RawMessage }
		}
		require.NoError(t, json.Unmarshal(b, &v), "%s", b)
		raw := v.Usage
		if raw == nil {
			raw = v.Response.Usage
		}
		var u struct {
			PromptTokens, CompletionTokens, InputTokens, OutputTokens int64
			PromptTokensDetails, InputTokensDetails                   struct{ CachedTokens, CacheWriteTokens int64 }
			CompletionTokensDetails, OutputTokensDetails              struct{ ReasoningTokens int64 }
		}
		require.NoError(t, json.Unmarshal([]byte(snake.Replace(string(raw))), &u), "%s", raw)
		c = detailCounts{u.PromptTokens + u.InputTokens, u.CompletionTokens + u.OutputTokens,
			u.PromptTokensDetails.CachedTokens + u.InputTokensDetails.CachedTokens,
			u.PromptTokensDetails.CacheWriteTokens + u.InputTokensDetails.CacheWriteTokens,
			u.CompletionTokensDetails.ReasoningTokens + u.OutputTokensDetails.ReasoningTokens}
	}
	if !bytes.HasPrefix(body, []byte("data:")) && !bytes.HasPrefix(body, []byte("event:")) {
		decode(body)
		return c
	}
	for ev, err := range sse.Read(bytes.NewReader(body)) {
		require.NoError(t, err)
		if strings.Contains(ev.Data, `"usage":{`) {
			decode([]byte(ev.Data))
		}
	}
	return c
}

// snake turns the usage's snake_case members into the field names that
// encoding/json matches.
var snake = strings.NewReplacer("_", "")

// TestUsageDetailsThroughTheRelay: an upstream's cached, cache-write and
// reasoning tokens, in each format it reports them, reach the client's
// usage, streamed and not, in chat and in responses, and the key's usage
// ledger, and are charged at their own rates (issue 26).
func TestUsageDetailsThroughTheRelay(t *testing.T) {
	t.Parallel()
	const chatBody = `{"model":%q,"messages":[{"role":"user","content":"hi"}]}`
	const chatStream = `{"model":%q,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`
	const respBody = `{"model":%q,"input":"hi"}`
	const respStream = `{"model":%q,"input":"hi","stream":true}`
	openai := detailCounts{Input: relaytest.PromptTokens, Output: 8, Cached: relaytest.CachedTokens, Reasoning: relaytest.ReasoningTokens}
	anthropic := detailCounts{Input: 80, Output: 9, Cached: 50, CacheWrite: 20}
	google := detailCounts{Input: 80, Output: 9, Cached: 50, Reasoning: 3}
	tests := []struct {
		name, model, path, body string
		want                    detailCounts
	}{
		{"Chat", "m-openai", "/v1/chat/completions", chatBody, openai},
		{"ChatStream", "m-openai", "/v1/chat/completions", chatStream, openai},
		{"Responses", "m-openai", "/v1/responses", respBody, openai},
		{"ResponsesStream", "m-openai", "/v1/responses", respStream, openai},
		{"ChatFromAnthropic", "m-anthropic", "/v1/chat/completions", chatBody, anthropic},
		{"ChatStreamFromAnthropic", "m-anthropic", "/v1/chat/completions", chatStream, anthropic},
		{"ResponsesFromAnthropic", "m-anthropic", "/v1/responses", respBody, anthropic},
		{"ResponsesStreamFromAnthropic", "m-anthropic", "/v1/responses", respStream, anthropic},
		{"ChatFromGemini", "m-gemini", "/v1/chat/completions", chatBody, google},
		{"ChatStreamFromGemini", "m-gemini", "/v1/chat/completions", chatStream, google},
		{"ResponsesFromGemini", "m-gemini", "/v1/responses", respBody, google},
	}
	// A dollar a million input tokens, a tenth of it for cached ones, two
	// for cache writes; ten a million output tokens, twenty for reasoning.
	rate := func(v float64) *float64 { return &v }
	pricing := models.Pricing{InputPerMillion: 1, OutputPerMillion: 10,
		CachedInputPerMillion: rate(0.1), CacheWritePerMillion: rate(2), ReasoningPerMillion: rate(20)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := relaytest.NewUpstream()
			t.Cleanup(up.Close)
			other := cacheUpstream(t)
			r, err := relay.New([]relay.Route{
				{Model: "m-openai", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Model: relaytest.ModeDetails}}},
				{Model: "m-anthropic", Upstreams: []relay.Upstream{{BaseURL: other.URL + "/v1", Key: upstreamKey, API: relay.APIAnthropic}}},
				{Model: "m-gemini", Upstreams: []relay.Upstream{{BaseURL: other.URL + "/v1beta", Key: upstreamKey, API: relay.APIGemini}}},
			})
			require.NoError(t, err)
			keys := auth.NewMemoryKeyStore()
			require.NoError(t, keys.Add(t.Context(), clientKey, auth.Key{ID: "k", Quota: auth.LimitedQuota(quota)}))
			var list []models.Model
			for _, id := range []string{"m-openai", "m-anthropic", "m-gemini"} {
				list = append(list, models.Model{ID: id, EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}, Pricing: &pricing})
			}
			catalog := models.NewMemoryCatalog(list...)
			mux := http.NewServeMux()
			chat.Register(mux, chat.NewHandler(catalog, r.Chat()))
			responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
			done := make(chan struct{}, 1)
			srv := httptest.NewServer(auth.Middleware(keys)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer func() { done <- struct{}{} }()
				mux.ServeHTTP(w, r)
			})))
			t.Cleanup(srv.Close)
			req, err := http.NewRequest(http.MethodPost, srv.URL+tc.path, strings.NewReader(fmt.Sprintf(tc.body, tc.model)))
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+clientKey)
			res, err := srv.Client().Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			require.NoError(t, err)
			<-done
			require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
			require.Equal(t, tc.want, detailsOf(t, body), "the client's usage: %s", body)

			k, err := keys.Lookup(t.Context(), clientKey)
			require.NoError(t, err)
			require.Equal(t, tc.want.Input+tc.want.Output, k.Quota.Used, "charged the upstream's usage")
			w := tc.want
			cost := (float64(w.Input-w.Cached-w.CacheWrite)*1 + float64(w.Cached)*0.1 + float64(w.CacheWrite)*2 +
				float64(w.Output-w.Reasoning)*10 + float64(w.Reasoning)*20) / 1e6
			require.InDelta(t, cost, k.Quota.CostUSD, 1e-12, "each part at its rate")
			rows, err := keys.Usage(t.Context(), auth.UsageParams{GroupBy: auth.GroupByModel})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			require.InDelta(t, cost, rows[0].CostUSD, 1e-12)
			rows[0].CostUSD = 0
			require.Equal(t, auth.UsageRow{Model: tc.model, Requests: 1, InputTokens: w.Input, OutputTokens: w.Output,
				CachedTokens: w.Cached, CacheWriteTokens: w.CacheWrite, ReasoningTokens: w.Reasoning}, rows[0], "the ledger's row")
		})
	}
}
