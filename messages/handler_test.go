package messages_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/hanguptest"
	"github.com/gatewaykit/gatewaykit/messages"
)

// scripted is a backend whose stream is deltas, then err (if any); its
// Complete returns res or err.
type scripted struct {
	deltas []chat.Delta
	err    error
	res    *chat.Result
}

func (b *scripted) Complete(context.Context, *chat.Params) (*chat.Result, error) { return b.res, b.err }

func (b *scripted) Stream(_ context.Context, _ *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		for _, d := range b.deltas {
			if !yield(d, nil) {
				return
			}
		}
		if b.err != nil {
			yield(chat.Delta{}, b.err)
		}
	}
}

// completeOnly hides Stream: a backend that does not stream.
type completeOnly struct{ chat.Backend }

const hello = `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
const helloStream = `{"model":"demo-chat","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`

// TestErrors: every error in the format's envelope, with x-should-retry:
// false when a retry cannot help.
func TestErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		h       http.Handler
		body    string
		status  int
		typ     string
		message string
		noRetry bool
	}{
		{"not JSON", newTestHandler(), `{`, 400, "invalid_request_error", "not valid JSON", true},
		{"content not a string or blocks", newTestHandler(), `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"user","content":5}]}`, 400, "invalid_request_error", "content must be", true},
		{"no max_tokens", newTestHandler(), `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens", true},
		{"max_tokens above the gateway's largest", newTestHandler(), `{"model":"demo-chat","max_tokens":4611686018427387904,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens: must be at most 2147483647, got 4611686018427387904", true},
		{"max_tokens of the largest int64", newTestHandler(), `{"model":"demo-chat","max_tokens":9223372036854775807,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens: must be at most 2147483647", true},
		{"unknown model", newTestHandler(), `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 404, "not_found_error", "nope", true},
		{"model without compat", newTestHandler(), `{"model":"` + videoModel + `","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "compat", true},
		{"rate limited backend", newHandlerWith(&scripted{err: &apierrors.Error{Status: 429, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: "slow down"}}), hello, 429, "rate_limit_error", "slow down", false},
		{"backend fails", newHandlerWith(&scripted{err: errors.New("secret detail")}), hello, 500, "api_error", "internal", false},
		{"bad gateway", newHandlerWith(&scripted{err: apierrors.BadGateway("The upstream failed.", nil)}), hello, 502, "api_error", "upstream failed", false},
		{"backend fails before a stream", newHandlerWith(&scripted{err: apierrors.BadGateway("The upstream failed.", nil)}), helloStream, 502, "api_error", "upstream failed", false},
		{"tool arguments not an object", newHandlerWith(&scripted{res: &chat.Result{Choices: []chat.Output{{ToolCalls: []chat.ToolCall{{Function: chat.FunctionCall{Name: "f", Arguments: "[1]"}}}}}}}), hello, 500, "api_error", "internal", false},
		{"two choices", newHandlerWith(&scripted{res: &chat.Result{Choices: make([]chat.Output, 2)}}), hello, 500, "api_error", "internal", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := post(t, tc.h, tc.body)
			require.Equal(t, tc.status, w.Code, w.Body.String())
			require.Equal(t, "application/json", w.Header().Get("Content-Type"))
			e := decodeError(t, w.Body.String())
			require.Equal(t, tc.typ, e.Error.Type)
			require.Contains(t, strings.ToLower(e.Error.Message), strings.ToLower(tc.message))
			require.NotContains(t, w.Body.String(), "secret detail")
			if tc.noRetry {
				require.Equal(t, "false", w.Header().Get("X-Should-Retry"))
			} else {
				require.Empty(t, w.Header().Get("X-Should-Retry"))
			}
		})
	}
}

func decodeError(t *testing.T, body string) apierrors.MessagesBody {
	t.Helper()
	var e apierrors.MessagesBody
	require.NoError(t, jsonUnmarshal(body, &e), body)
	require.Equal(t, "error", e.Type)
	return e
}

// TestStreamEnds: how a stream ends, well or not; every one follows the
// event sequence.
func TestStreamEnds(t *testing.T) {
	t.Parallel()
	usage := &chat.Usage{PromptTokens: 3, CompletionTokens: 4}
	for _, tc := range []struct {
		name   string
		b      chat.Backend
		last   string // the last event
		check  func(t *testing.T, evs []messages.StreamEvent)
		errMsg string
	}{
		{"fails after text", &scripted{deltas: []chat.Delta{{Content: "Hel"}}, err: apierrors.BadGateway("The upstream failed in the middle of the reply.", nil)},
			messages.EventError, nil, "middle of the reply"},
		{"interleaved tool calls", &scripted{deltas: []chat.Delta{
			{ToolCalls: []chat.ToolCallDelta{{Index: 0, Name: "f", Arguments: "{"}}},
			{ToolCalls: []chat.ToolCallDelta{{Index: 1, Name: "g", Arguments: "{"}}},
			{ToolCalls: []chat.ToolCallDelta{{Index: 0, Arguments: "}"}}},
		}}, messages.EventError, nil, "internal"},
		{"empty reply", &scripted{deltas: []chat.Delta{{FinishReason: chat.FinishContentFilter, Usage: usage}}}, messages.EventMessageStop,
			func(t *testing.T, evs []messages.StreamEvent) {
				require.Len(t, evs, 4, "message_start, ping, message_delta, message_stop")
				require.Equal(t, messages.StopRefusal, evs[2].Data.Delta.StopReason)
				require.Equal(t, 4, evs[2].Data.Usage.OutputTokens)
			}, ""},
		{"reasoning, text, two tools", &scripted{deltas: []chat.Delta{
			{Reasoning: "hmm"}, {Content: "ok"},
			{ToolCalls: []chat.ToolCallDelta{{Index: 0, ID: "c1", Name: "f", Arguments: `{"a"`}}},
			{ToolCalls: []chat.ToolCallDelta{{Index: 0, Arguments: `:1}`}, {Index: 1, Name: "g"}}},
			{Usage: usage},
		}}, messages.EventMessageStop,
			func(t *testing.T, evs []messages.StreamEvent) {
				var starts []string
				for _, ev := range evs {
					if ev.Name == messages.EventContentBlockStart {
						starts = append(starts, ev.Data.ContentBlock.Type)
					}
				}
				require.Equal(t, []string{"thinking", "text", "tool_use", "tool_use"}, starts)
				md := evs[len(evs)-2].Data
				require.Equal(t, messages.StopToolUse, md.Delta.StopReason, "tool_use without a finish reason")
				require.Equal(t, 3, md.Usage.InputTokens)
			}, ""},
		{"a backend that does not stream", completeOnly{&scripted{res: &chat.Result{Choices: []chat.Output{{Content: "whole"}}, Usage: *usage}}}, messages.EventMessageStop,
			func(t *testing.T, evs []messages.StreamEvent) {
				require.Equal(t, "whole", evs[3].Data.Delta.Text)
			}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hooked []*apierrors.Error
			var mu sync.Mutex
			h := newHandlerWith(tc.b, endpoint.WithErrorHook(func(_ *http.Request, e *apierrors.Error) {
				mu.Lock()
				hooked = append(hooked, e)
				mu.Unlock()
			}))
			w := post(t, h, helloStream)
			require.Equal(t, 200, w.Code)
			evs, err := messages.ParseStream(w.Body.String())
			require.NoError(t, err)
			require.NoError(t, messages.CheckEvents(evs), w.Body.String())
			last := evs[len(evs)-1]
			require.Equal(t, tc.last, last.Name)
			if tc.errMsg != "" {
				require.Contains(t, strings.ToLower(last.Data.Error.Message), tc.errMsg)
				require.Len(t, hooked, 1, "the error hook sees the stream's error")
			}
			if tc.check != nil {
				tc.check(t, evs)
			}
		})
	}
}

// TestClientGoesAway hangs up in the middle of a request and checks that
// the backend sees the cancellation, the handler returns, a stream's first
// event was the message_start, and the number of goroutines comes back to
// what it was. It does not run in parallel: it counts goroutines.
func TestClientGoesAway(t *testing.T) {
	for _, body := range []string{hello, helloStream} {
		stream := body == helloStream
		t.Run(fmt.Sprintf("stream=%t", stream), func(t *testing.T) {
			b := endpointtest.NewBlockingBackend[chat.Params, chat.Result](chat.Delta{Content: "a"})
			hanguptest.Run(t, hanguptest.Case{
				Handler:   newHandlerWith(b),
				Path:      "/v1/messages",
				Body:      body,
				Stream:    stream,
				FirstLine: func(line string) bool { return line == "event: message_start\n" },
				Blocked:   b.Blocked,
				Returned:  b.Returned,
			})
		})
	}
}

// TestAnyAnthropicVersion: an unknown anthropic-version, or none, is
// accepted.
func TestAnyAnthropicVersion(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	for _, v := range []string{"", "2023-01-01", "9999-99-99", "not a date"} {
		r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(hello))
		r.Header.Set("Content-Type", "application/json")
		if v != "" {
			r.Header.Set("Anthropic-Version", v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, 200, w.Code, "anthropic-version %q: %s", v, w.Body)
	}
}
