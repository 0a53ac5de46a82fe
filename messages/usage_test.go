package messages_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/messages"
)

// TestUsageCache: a chat usage's cached and cache-write prompt tokens are
// the format's cache_read_input_tokens and cache_creation_input_tokens,
// counted apart from input_tokens, in the reply and in the stream's
// message_start and message_delta; without details, neither member is
// sent (issue 26).
func TestUsageCache(t *testing.T) {
	t.Parallel()
	const (
		withCache = `{"input_tokens":20,"output_tokens":7,"cache_creation_input_tokens":30,"cache_read_input_tokens":50}`
		noCache   = `{"input_tokens":100,"output_tokens":7}`
	)
	cached := chat.Usage{PromptTokens: 100, CompletionTokens: 7,
		PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: 50, CacheWriteTokens: 30}}
	for _, tc := range []struct {
		name  string
		usage chat.Usage
		want  string
	}{
		{"cache read and written", cached, withCache},
		{"no details", chat.Usage{PromptTokens: 100, CompletionTokens: 7}, noCache},
		{"details over the prompt, taken at most the prompt", chat.Usage{PromptTokens: 100, CompletionTokens: 7,
			PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: 90, CacheWriteTokens: 30}},
			`{"input_tokens":0,"output_tokens":7,"cache_creation_input_tokens":10,"cache_read_input_tokens":90}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := &scripted{
				res:    &chat.Result{Choices: []chat.Output{{Content: "ok", FinishReason: chat.FinishStop}}, Usage: tc.usage},
				deltas: []chat.Delta{{Usage: &tc.usage}, {Content: "ok"}, {FinishReason: chat.FinishStop}},
			}
			h := newHandlerWith(b)
			w := post(t, h, hello)
			require.Equal(t, 200, w.Code, w.Body.String())
			var reply struct {
				Usage json.RawMessage `json:"usage"`
			}
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &reply))
			require.JSONEq(t, tc.want, string(reply.Usage))
			require.Equal(t, tc.want, string(reply.Usage), "the members in the struct's order")

			w = post(t, h, helloStream)
			require.Equal(t, 200, w.Code)
			evs, err := messages.ParseStream(w.Body.String())
			require.NoError(t, err)
			require.NoError(t, messages.CheckEvents(evs), w.Body.String())
			var start, delta struct {
				Message struct {
					Usage json.RawMessage `json:"usage"`
				} `json:"message"`
				Usage json.RawMessage `json:"usage"`
			}
			require.NoError(t, json.Unmarshal([]byte(evs[0].Raw), &start))
			require.NoError(t, json.Unmarshal([]byte(evs[len(evs)-2].Raw), &delta))
			var want map[string]int
			require.NoError(t, json.Unmarshal([]byte(tc.want), &want))
			want["output_tokens"] = 0
			wantStart, err := json.Marshal(want)
			require.NoError(t, err)
			require.JSONEq(t, string(wantStart), string(start.Message.Usage), "message_start: the input, no output yet")
			require.JSONEq(t, tc.want, string(delta.Usage), "message_delta")
		})
	}
}
