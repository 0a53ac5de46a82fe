package relay_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// fakeAnthropic is an upstream that speaks the messages format as its
// reference documents it: POST /v1/messages with x-api-key and
// anthropic-version, JSON replies, named stream events (message_start,
// content_block_start, ping, content_block_delta, content_block_stop,
// message_delta, message_stop), the {"type":"error","error":{…}}
// envelope, 429 with retry-after and 529 overloaded_error. The upstream
// model name picks the behaviour: "rate-limited", "overloaded", "bad"
// (a 400), "midstream-error" (an error event after the first text);
// any other answers "Hello from <model>." or, with tools, calls the
// first tool.
type fakeAnthropic struct {
	srv  *httptest.Server
	mu   sync.Mutex
	last messages.Request
	hdr  http.Header
}

const anthropicKey = "sk-upstream-anthropic"

func newFakeAnthropic(t *testing.T) *fakeAnthropic {
	f := &fakeAnthropic{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAnthropic) lastRequest() (messages.Request, http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, f.hdr
}

func anthropicErrorReply(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011"}`, typ, msg)
}

func (f *fakeAnthropic) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
		anthropicErrorReply(w, 404, "not_found_error", "Not found")
		return
	}
	if r.Header.Get("X-Api-Key") != anthropicKey || r.Header.Get("Authorization") != "" {
		anthropicErrorReply(w, 401, "authentication_error", "invalid x-api-key")
		return
	}
	if r.Header.Get("Anthropic-Version") == "" {
		anthropicErrorReply(w, 400, "invalid_request_error", "anthropic-version: header is required")
		return
	}
	var req messages.Request
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil || req.MaxTokens < 1 || len(req.Messages) == 0 {
		anthropicErrorReply(w, 400, "invalid_request_error", fmt.Sprintf("bad request: %v", err))
		return
	}
	f.mu.Lock()
	f.last, f.hdr = req, r.Header.Clone()
	f.mu.Unlock()
	switch req.Model {
	case "rate-limited":
		w.Header().Set("Retry-After", "7")
		anthropicErrorReply(w, 429, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")
		return
	case "overloaded":
		anthropicErrorReply(w, 529, "overloaded_error", "Overloaded")
		return
	case "bad":
		anthropicErrorReply(w, 400, "invalid_request_error", "messages.0.content: Input should be a valid list")
		return
	}
	text := "Hello from " + req.Model + "."
	var tool *messages.Tool
	if len(req.Tools) > 0 {
		tool = &req.Tools[0]
	}
	if !req.Stream {
		reply := messages.Reply{ID: "msg_up", Type: "message", Role: "assistant", Model: req.Model,
			Content:    []messages.ContentBlock{{Type: "thinking", Thinking: "Let me think.", Signature: "sig"}, {Type: "text", Text: text}},
			StopReason: messages.StopEndTurn, Usage: messages.Usage{InputTokens: 12, OutputTokens: 6}}
		if tool != nil {
			reply.Content = append(reply.Content, messages.ContentBlock{Type: "tool_use", ID: "toolu_up1", Name: tool.Name, Input: json.RawMessage(`{"city":"Paris"}`)})
			reply.StopReason = messages.StopToolUse
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(reply)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event, data string) {
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		w.(http.Flusher).Flush()
	}
	send("message_start", `{"type":"message_start","message":{"id":"msg_up","type":"message","role":"assistant","content":[],"model":"`+req.Model+`","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_read_input_tokens":3,"output_tokens":1}}}`)
	send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	send("ping", `{"type": "ping"}`)
	send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`)
	send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQB"}}`)
	send("content_block_stop", `{"type":"content_block_stop","index":0}`)
	send("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
	half := len(text) / 2
	send("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"`+text[:half]+`"}}`)
	if req.Model == "midstream-error" {
		send("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		return
	}
	send("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"`+text[half:]+`"}}`)
	send("content_block_stop", `{"type":"content_block_stop","index":1}`)
	stop := "end_turn"
	if tool != nil {
		send("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_up1","name":"`+tool.Name+`","input":{}}}`)
		send("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`)
		send("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}`)
		send("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ris\"}"}}`)
		send("content_block_stop", `{"type":"content_block_stop","index":2}`)
		stop = "tool_use"
	}
	send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":6}}`)
	send("message_stop", `{"type":"message_stop"}`)
}

// anthropicChat is the chat handler over a relay whose models go to
// the fake upstream, by upstream model name: "claude" (claude-up),
// "claude-reasoner" (a reasoning model), and "rate-limited",
// "overloaded", "bad", "midstream-error".
func anthropicChat(t *testing.T, f *fakeAnthropic) *httptest.Server {
	var routes []relay.Route
	var list []models.Model
	for pub, up := range map[string]string{"claude": "claude-up", "claude-reasoner": "claude-up", "rate-limited": "", "overloaded": "", "bad": "", "midstream-error": ""} {
		routes = append(routes, relay.Route{Model: pub, Upstreams: []relay.Upstream{{BaseURL: f.srv.URL + "/v1", Key: anthropicKey, Model: up, API: relay.APIAnthropic}}})
		list = append(list, models.Model{ID: pub, EndpointTypes: []models.EndpointType{models.Compat}, Reasoning: pub == "claude-reasoner"})
	}
	r, err := relay.New(routes)
	require.NoError(t, err)
	srv := httptest.NewServer(chat.NewHandler(models.NewMemoryCatalog(list...), r.Chat(), endpoint.WithKeepAlive(0)))
	t.Cleanup(srv.Close)
	return srv
}

func openaiClient(srv *httptest.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-client"), option.WithMaxRetries(0))
}

var weatherTool = openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
	Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
})

// TestAnthropicUpstreamSDK: the official OpenAI client reaches a model
// whose upstream speaks the messages format, streaming and not.
func TestAnthropicUpstreamSDK(t *testing.T) {
	t.Parallel()
	f := newFakeAnthropic(t)
	client := openaiClient(anthropicChat(t, f))

	c, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model:       "claude",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hello")},
		Temperature: openai.Float(1.5),
		Stop:        openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END"}},
	})
	require.NoError(t, err)
	require.Equal(t, "Hello from claude-up.", c.Choices[0].Message.Content)
	require.Equal(t, "stop", c.Choices[0].FinishReason)
	require.Equal(t, "claude", c.Model)
	require.EqualValues(t, 12, c.Usage.PromptTokens)
	require.EqualValues(t, 6, c.Usage.CompletionTokens)
	require.EqualValues(t, 18, c.Usage.TotalTokens)
	up, hdr := f.lastRequest()
	require.Equal(t, "claude-up", up.Model)
	require.Equal(t, "Be brief.", up.System.String())
	require.Equal(t, 4096, up.MaxTokens, "the format requires max_tokens")
	require.Equal(t, 1.0, *up.Temperature, "clamped to the format's range")
	require.Equal(t, []string{"END"}, up.StopSequences)
	require.Equal(t, relay.DefaultAnthropicVersion, hdr.Get("Anthropic-Version"))
	require.Empty(t, hdr.Get("X-Gatewaykit-Key-Header"))

	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:         "claude",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools:         []openai.ChatCompletionToolUnionParam{weatherTool},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for stream.Next() {
		chunks++
		require.True(t, acc.AddChunk(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.Greater(t, chunks, 5)
	msg := acc.Choices[0].Message
	require.Equal(t, "Hello from claude-up.", msg.Content)
	require.Equal(t, "tool_calls", acc.Choices[0].FinishReason)
	require.Len(t, msg.ToolCalls, 1)
	require.Equal(t, "toolu_up1", msg.ToolCalls[0].ID)
	require.Equal(t, "get_weather", msg.ToolCalls[0].Function.Name)
	require.JSONEq(t, `{"city":"Paris"}`, msg.ToolCalls[0].Function.Arguments)
	require.EqualValues(t, 15, acc.Usage.PromptTokens, "input and cache-read tokens")
	require.EqualValues(t, 6, acc.Usage.CompletionTokens)

	// The tool result goes back as a tool_result block of a user turn.
	_, err = client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: "claude",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.UserMessage("Weather in Paris?"),
			msg.ToParam(),
			openai.ToolMessage("Sunny", "toolu_up1"),
		},
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool},
	})
	require.NoError(t, err)
	up, _ = f.lastRequest()
	require.Len(t, up.Messages, 3)
	require.Equal(t, "assistant", up.Messages[1].Role)
	blocks := up.Messages[1].Content.Blocks
	require.Equal(t, "tool_use", blocks[len(blocks)-1].Type)
	require.JSONEq(t, `{"city":"Paris"}`, string(blocks[len(blocks)-1].Input))
	require.Equal(t, "user", up.Messages[2].Role)
	require.Equal(t, "tool_result", up.Messages[2].Content.Blocks[0].Type)
	require.Equal(t, "toolu_up1", up.Messages[2].Content.Blocks[0].ToolUseID)
	require.Equal(t, "Sunny", up.Messages[2].Content.Blocks[0].Content.String())
}

// TestAnthropicUpstreamReasoning: thinking comes back as
// reasoning_content, and reasoning_effort asks for a thinking budget.
func TestAnthropicUpstreamReasoning(t *testing.T) {
	t.Parallel()
	f := newFakeAnthropic(t)
	srv := anthropicChat(t, f)
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"claude-reasoner","reasoning_effort":"low","max_tokens":100,"messages":[{"role":"user","content":"Hi"}]}`))
	require.NoError(t, err)
	defer res.Body.Close()
	var c struct {
		Choices []struct {
			Message struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.Equal(t, 200, res.StatusCode)
	require.NoError(t, json.NewDecoder(res.Body).Decode(&c))
	require.Equal(t, "Let me think.", c.Choices[0].Message.ReasoningContent)
	require.Equal(t, "Hello from claude-up.", c.Choices[0].Message.Content)
	up, _ := f.lastRequest()
	require.Equal(t, &messages.Thinking{Type: "enabled", BudgetTokens: 2048}, up.Thinking)
	require.Equal(t, 2148, up.MaxTokens, "max_tokens above the budget")
}

// TestAnthropicUpstreamErrors: the format's errors come back in the
// OpenAI shape the client reads.
func TestAnthropicUpstreamErrors(t *testing.T) {
	t.Parallel()
	f := newFakeAnthropic(t)
	client := openaiClient(anthropicChat(t, f))
	for _, tc := range []struct {
		model      string
		status     int
		typ, code  string
		message    string
		retryAfter string
	}{
		{"rate-limited", 429, "rate_limit_error", "rate_limit_exceeded", "per-minute rate limit", "7"},
		{"overloaded", 503, "server_error", "service_unavailable", "overloaded", ""},
		{"bad", 400, "invalid_request_error", "invalid_request_error", "Input should be a valid list", ""},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.model, stream), func(t *testing.T) {
				params := openai.ChatCompletionNewParams{Model: shared.ChatModel(tc.model), Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}}
				var err error
				if stream {
					s := client.Chat.Completions.NewStreaming(t.Context(), params)
					require.False(t, s.Next())
					err = s.Err()
				} else {
					_, err = client.Chat.Completions.New(t.Context(), params)
				}
				var apiErr *openai.Error
				require.True(t, errors.As(err, &apiErr), "%v", err)
				require.Equal(t, tc.status, apiErr.StatusCode)
				require.Equal(t, tc.typ, apiErr.Type)
				require.Equal(t, tc.code, apiErr.Code)
				require.Contains(t, apiErr.Message, tc.message)
				require.Equal(t, tc.retryAfter, apiErr.Response.Header.Get("Retry-After"))
			})
		}
	}

	// An error event after the first text: the stream's error event.
	s := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{Model: "midstream-error",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hi")}})
	var text strings.Builder
	for s.Next() {
		for _, c := range s.Current().Choices {
			text.WriteString(c.Delta.Content)
		}
	}
	require.Error(t, s.Err())
	require.Contains(t, s.Err().Error(), "bad_gateway")
	require.Equal(t, "Hello from mi", text.String(), "what came before the error")
}
