package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// chatBody is a chat request for the public model of mode, with fields
// that chat.Request does not model, at the top level and nested.
func chatBody(mode string, extra string) string {
	return `{"model":"pub-` + mode + `","messages":[{"role":"user","content":"Hi","x_msg":{"a":[1,2.50]}}],` +
		`"seed":42,"user":"u-1","logprobs":false,"reasoning_effort":"low","parallel_tool_calls":true` + extra + `}`
}

// upstreamSaw returns the JSON body that the upstream received last.
func upstreamSaw(t *testing.T, g *gateway) map[string]json.RawMessage {
	t.Helper()
	last := g.up.Last()
	require.NotNil(t, last)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(last.Body, &m))
	return m
}

func TestChatForwardsEveryFieldAndTheRightHeaders(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	body := chatBody(relaytest.ModeOK, `,"temperature":0.70,"stop":"\n"`)
	res := g.post(t, "/v1/chat/completions", body,
		"OpenAI-Organization", "org-7", "Idempotency-Key", "idem-7", "X-Secret-Internal", "no", "Cookie", "c=1")
	require.Equal(t, 200, res.StatusCode)

	// The upstream got the client's body with only the model replaced.
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &want))
	want["model"] = json.RawMessage(`"ok"`)
	got := upstreamSaw(t, g)
	require.Equal(t, len(want), len(got))
	for k, v := range want {
		require.Equal(t, string(v), string(got[k]), "member %s", k)
	}
	require.Equal(t, strings.Replace(body, `"model":"pub-ok"`, `"model":"ok"`, 1), string(g.up.Last().Body), "byte for byte")
	h := g.up.Last().Header
	require.Equal(t, "Bearer "+upstreamKey, h.Get("Authorization"))
	require.Equal(t, "org-7", h.Get("OpenAI-Organization"))
	require.Equal(t, "idem-7", h.Get("Idempotency-Key"))
	require.Empty(t, h.Get("X-Secret-Internal"))
	require.Empty(t, h.Get("Cookie"))
	for name, vs := range h {
		for _, v := range vs {
			require.NotContains(t, v, clientKey, "header %s", name)
		}
	}
}

func TestChatComplete(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeOK, `,"n":2`))
	require.Equal(t, 200, res.StatusCode)
	v := decode(t, res.Body)
	require.True(t, strings.HasPrefix(v["id"].(string), "chatcmpl-"), "the gateway's own id")
	require.NotEqual(t, "upstream-id", v["id"])
	require.Equal(t, "pub-ok", v["model"], "the public model name")
	choices := v["choices"].([]any)
	require.Len(t, choices, 2)
	for i, c := range choices {
		c := c.(map[string]any)
		require.Equal(t, float64(i), c["index"])
		require.Equal(t, relaytest.Text(8), c["message"].(map[string]any)["content"])
		require.Equal(t, "stop", c["finish_reason"])
	}
	require.Equal(t, map[string]any{"prompt_tokens": 11.0, "completion_tokens": 16.0, "total_tokens": 27.0}, v["usage"])
	require.Equal(t, int64(27), g.charged(t))
}

func TestChatCompleteToolCalls(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeTools, ""))
	require.Equal(t, 200, res.StatusCode)
	v := decode(t, res.Body)
	c := v["choices"].([]any)[0].(map[string]any)
	require.Equal(t, "tool_calls", c["finish_reason"])
	msg := c["message"].(map[string]any)
	require.Nil(t, msg["content"])
	require.Equal(t, []any{map[string]any{"id": "call_up1", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}, msg["tool_calls"])
}

// chunk is what the tests read of a streamed chat chunk.
type chunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string `json:"role"`
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func parseChunks(t *testing.T, evs []string) (chunks []chunk, done bool) {
	t.Helper()
	for i, e := range evs {
		if e == sse.DoneData {
			require.Equal(t, len(evs)-1, i, "[DONE] is last")
			return chunks, true
		}
		var c chunk
		require.NoError(t, json.Unmarshal([]byte(e), &c), e)
		chunks = append(chunks, c)
	}
	return chunks, false
}

func TestChatStream(t *testing.T) {
	t.Parallel()
	for _, includeUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "WithoutUsage", true: "WithUsage"}[includeUsage], func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil)
			extra := `,"stream":true`
			if includeUsage {
				extra += `,"stream_options":{"include_usage":true}`
			}
			res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeOK, extra))
			require.Equal(t, 200, res.StatusCode)
			require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
			chunks, done := parseChunks(t, events(t, res.Body))
			require.True(t, done)

			// The upstream was asked for its usage whatever the client asked.
			require.JSONEq(t, `{"include_usage":true}`, string(upstreamSaw(t, g)["stream_options"]))

			var text strings.Builder
			var usageChunks int
			for _, c := range chunks {
				require.True(t, strings.HasPrefix(c.ID, "chatcmpl-"))
				require.Equal(t, chunks[0].ID, c.ID)
				require.Equal(t, "pub-ok", c.Model)
				if c.Usage != nil {
					usageChunks++
					require.Empty(t, c.Choices)
					require.Equal(t, 11, c.Usage.PromptTokens)
					require.Equal(t, 8, c.Usage.CompletionTokens)
					require.Equal(t, 19, c.Usage.TotalTokens)
					continue
				}
				require.Len(t, c.Choices, 1)
				text.WriteString(c.Choices[0].Delta.Content)
			}
			require.Equal(t, relaytest.Text(8), text.String())
			require.Equal(t, map[bool]int{false: 0, true: 1}[includeUsage], usageChunks)
			require.Equal(t, "stop", *chunks[len(chunks)-1-usageChunks].Choices[0].FinishReason)
			require.Equal(t, int64(19), g.charged(t), "the upstream's usage is charged either way")
		})
	}
}

func TestChatStreamKeepsClientStreamOptions(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeOK, `,"stream":true,"stream_options":{"include_obfuscation":false}`))
	require.Equal(t, 200, res.StatusCode)
	events(t, res.Body)
	require.JSONEq(t, `{"include_obfuscation":false,"include_usage":true}`, string(upstreamSaw(t, g)["stream_options"]))
}

func TestChatStreamToolCalls(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeTools, `,"stream":true,"n":2`))
	require.Equal(t, 200, res.StatusCode)
	chunks, done := parseChunks(t, events(t, res.Body))
	require.True(t, done)
	args := map[int]string{}
	finish := map[int]string{}
	for _, c := range chunks {
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				require.Equal(t, 0, tc.Index)
				if tc.ID != "" {
					require.Equal(t, "call_up1", tc.ID)
					require.Equal(t, "get_weather", tc.Function.Name)
				}
				args[ch.Index] += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish[ch.Index] = *ch.FinishReason
			}
		}
	}
	require.Equal(t, map[int]string{0: `{"city":"Paris"}`, 1: `{"city":"Paris"}`}, args)
	require.Equal(t, map[int]string{0: "tool_calls", 1: "tool_calls"}, finish)
}

// TestChatStreamWithoutUpstreamUsage: an upstream that never reports
// usage is charged by the estimate of what was streamed.
func TestChatStreamWithoutUpstreamUsage(t *testing.T) {
	t.Parallel()
	g := newGateway(t, func(up *relaytest.Upstream) { up.Chunks = 12 })
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeNoUsage, `,"stream":true`))
	require.Equal(t, 200, res.StatusCode)
	_, done := parseChunks(t, events(t, res.Body))
	require.True(t, done)
	// Prompt: 3 + "Hi" (1). Completion: "tok0" (1), " tok1"…" tok9" (2
	// each), " tok10", " tok11" (2 each).
	require.Equal(t, int64(4+1+9*2+2*2), g.charged(t))
}

func TestChatErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode       string
		status     int
		code       string
		message    string
		retryAfter string
	}{
		{relaytest.ModeStatus400, 400, "invalid_value", "Invalid value for 'temperature'.", ""},
		{relaytest.ModeStatus401, 502, "bad_gateway", upstreamRefused401, ""},
		{relaytest.ModeStatus429, 429, "rate_limit_exceeded", "Rate limit reached for requests.", "7"},
		{relaytest.ModeStatus500, 502, "bad_gateway", "The upstream failed (HTTP 500).", ""},
		{relaytest.ModeMalformedJSON, 502, "bad_gateway", "The upstream sent a reply that could not be read.", ""},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := tc.mode + map[bool]string{false: "", true: "/stream"}[stream]
			if stream && tc.mode == relaytest.ModeMalformedJSON {
				continue // a stream error after the first byte: see TestChatStreamBreaks
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				g := newGateway(t, nil)
				extra := ""
				if stream {
					extra = `,"stream":true`
				}
				res := g.post(t, "/v1/chat/completions", chatBody(tc.mode, extra))
				require.Equal(t, tc.status, res.StatusCode)
				require.Equal(t, "application/json", res.Header.Get("Content-Type"))
				require.Equal(t, tc.retryAfter, res.Header.Get("Retry-After"))
				b, _ := io.ReadAll(res.Body)
				e := errorOf(t, string(b))
				require.Equal(t, tc.code, e["code"])
				require.Equal(t, tc.message, e["message"])
				require.Equal(t, int64(0), g.charged(t))
			})
		}
	}
}

// TestChatStreamBreaks: an upstream stream that breaks after the first
// chunk ends the client's stream with an error event and no [DONE], and
// what was streamed is charged.
func TestChatStreamBreaks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode    string
		code    string
		message string
	}{
		{relaytest.ModeDie, "bad_gateway", "The upstream's stream could not be read."},
		{relaytest.ModeMalformedSSE, "bad_gateway", "The upstream's stream could not be read."},
		{relaytest.ModeMalformedJSON, "bad_gateway", "The upstream sent a stream event that could not be read."},
		{relaytest.ModeErrorEvent, "bad_gateway", "The upstream failed in the middle of the reply."},
		{relaytest.ModeNoDone, "bad_gateway", "The upstream's stream ended early."},
		{relaytest.ModeHangMidStream, "gateway_timeout", "The upstream sent nothing for 100ms."},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil, relay.WithTimeouts(relay.Timeouts{Idle: 100 * time.Millisecond}))
			res := g.post(t, "/v1/chat/completions", chatBody(tc.mode, `,"stream":true`))
			require.Equal(t, 200, res.StatusCode)
			evs := events(t, res.Body)
			require.NotEmpty(t, evs)
			last := evs[len(evs)-1]
			require.NotEqual(t, sse.DoneData, last)
			e := errorOf(t, last)
			require.Equal(t, tc.code, e["code"])
			require.Equal(t, tc.message, e["message"])
			require.NotContains(t, last, relaytest.LeakHost, "the upstream's text is only logged")
			require.Positive(t, g.charged(t), "what was streamed is charged")
		})
	}
}

func TestChatFirstByteTimeout(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil, relay.WithTimeouts(relay.Timeouts{FirstByte: 300 * time.Millisecond}))
	for i, extra := range []string{"", `,"stream":true`} {
		res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeHang, extra))
		require.Equal(t, 504, res.StatusCode)
		b, _ := io.ReadAll(res.Body)
		e := errorOf(t, string(b))
		require.Equal(t, "gateway_timeout", e["code"])
		require.Equal(t, "The upstream did not answer within 300ms.", e["message"])
		waitRequests(t, g.up, i+1)
		<-g.up.Requests()[i].Cancelled
	}
}

// TestChatSlowStreamKeepsAlive: while a slow upstream is silent, the
// client gets keep-alive comments, and then every chunk.
func TestChatSlowStreamKeepsAlive(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.Delay, up.Chunks = 60*time.Millisecond, 3
	r, err := relay.New([]relay.Route{{Model: "pub", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Model: relaytest.ModeSlow}}}})
	require.NoError(t, err)
	catalog := models.NewMemoryCatalog(models.Model{ID: "pub", EndpointTypes: []models.EndpointType{models.Compat}})
	srv := httptest.NewServer(chat.NewHandler(catalog, r.Chat(), endpoint.WithKeepAlive(10*time.Millisecond)))
	defer srv.Close()
	res, err := srv.Client().Post(srv.URL, "application/json", strings.NewReader(`{"model":"pub","messages":[{"role":"user","content":"Hi"}],"stream":true}`))
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(raw), ": keep-alive\n")
	chunks, done := parseChunks(t, events(t, strings.NewReader(string(raw))))
	require.True(t, done)
	var text string
	for _, c := range chunks {
		text += c.Choices[0].Delta.Content
	}
	require.Equal(t, relaytest.Text(3), text)
}

// TestChatClientDisconnect: a client that goes away closes the upstream
// request at once, before the first byte and in the middle of a stream,
// and what was streamed is charged.
func TestChatClientDisconnect(t *testing.T) {
	t.Parallel()
	t.Run("BeforeFirstByte", func(t *testing.T) {
		t.Parallel()
		for _, extra := range []string{"", `,"stream":true`} {
			g := newGateway(t, nil)
			ctx, hangUp := context.WithCancel(t.Context())
			go func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(chatBody(relaytest.ModeHang, extra)))
				req.Header.Set("Authorization", "Bearer "+clientKey)
				if res, err := g.srv.Client().Do(req); err == nil {
					res.Body.Close()
				}
			}()
			waitRequests(t, g.up, 1)
			hangUp()
			<-g.up.Last().Cancelled
			require.Equal(t, int64(0), g.charged(t))
		}
	})
	t.Run("MidStream", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t, nil)
		ctx, hangUp := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+"/v1/chat/completions", strings.NewReader(chatBody(relaytest.ModeHangMidStream, `,"stream":true`)))
		req.Header.Set("Authorization", "Bearer "+clientKey)
		res, err := g.srv.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		next, stop := pull(sse.Read(res.Body))
		defer stop()
		var text string
		for text != relaytest.Text(2) {
			ev, err, ok := next()
			require.True(t, ok)
			require.NoError(t, err)
			var c chunk
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &c))
			text += c.Choices[0].Delta.Content
		}
		hangUp()
		<-g.up.Last().Cancelled
		// Prompt 4, "tok0" 1, " tok1" 2.
		require.Equal(t, int64(4+1+2), g.charged(t))
	})
}

// waitRequests waits until the upstream has received n requests.
func waitRequests(t *testing.T, up *relaytest.Upstream, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(up.Requests()) >= n }, 10*time.Second, time.Millisecond)
}

func TestChatFailover(t *testing.T) {
	t.Parallel()
	failing := relaytest.NewUpstream()
	t.Cleanup(failing.Close)
	good := relaytest.NewUpstream()
	t.Cleanup(good.Close)
	spare := relaytest.NewUpstream()
	t.Cleanup(spare.Close)
	r, err := relay.New([]relay.Route{{Model: "pub", Upstreams: []relay.Upstream{
		{Name: "dead", BaseURL: deadURL(t)},
		{Name: "failing", BaseURL: failing.BaseURL(), Model: relaytest.ModeStatus500},
		{Name: "good", BaseURL: good.BaseURL(), Model: relaytest.ModeOK},
		{Name: "spare", BaseURL: spare.BaseURL(), Model: relaytest.ModeOK},
	}}})
	require.NoError(t, err)
	for _, stream := range []bool{false, true} {
		got := chatThrough(t, r, stream)
		require.Equal(t, relaytest.Text(8), got)
	}
	// The second request does not try dead and failing again: they cool
	// down (relay.WithCooldown).
	require.Len(t, failing.Requests(), 1)
	require.Len(t, good.Requests(), 2)
	require.Empty(t, spare.Requests())
}

// chatThrough asks the relay's chat backend directly, with Params made
// without a body (so the request is encoded from chat.Request), and
// returns the reply's text.
func chatThrough(t *testing.T, r *relay.Relay, stream bool) string {
	t.Helper()
	p := &chat.Params{Request: &chat.Request{Model: "pub", Messages: []chat.Message{{Role: chat.RoleUser, Content: chat.TextContent("Hi")}}}}
	if !stream {
		res, err := r.Chat().Complete(t.Context(), p)
		require.NoError(t, err)
		require.Equal(t, 19, res.Usage.PromptTokens+res.Usage.CompletionTokens)
		return res.Choices[0].Content
	}
	var text string
	var usage *chat.Usage
	for d, err := range r.Chat().Stream(t.Context(), p) {
		require.NoError(t, err)
		text += d.Content
		if d.Usage != nil {
			u := *d.Usage
			usage = &u
		}
	}
	require.Equal(t, &chat.Usage{PromptTokens: 11, CompletionTokens: 8, TotalTokens: 19}, usage, "the upstream's usage is reported last")
	return text
}

// pull is iter.Pull2 for tests.
func pull[K, V any](seq iter.Seq2[K, V]) (func() (K, V, bool), func()) {
	return iter.Pull2(seq)
}
