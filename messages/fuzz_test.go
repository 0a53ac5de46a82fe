package messages_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

// FuzzDecode runs arbitrary bodies through the handler's decoding,
// validation and translation: nothing panics; a request is either
// refused with a 4xx in the format's envelope, or answered; and a valid
// one translates into a chat request that encodes.
func FuzzDecode(f *testing.F) {
	for _, req := range golden.Requests(f) {
		f.Add(string(req.Body))
	}
	f.Add(`{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"image","source":{"type":"url","url":"http://x"}}]}]}]}`)
	f.Add(`{"model":"m","max_tokens":1,"system":null,"messages":[{"role":"user","content":null}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		w := post(t, newTestHandler(), body)
		if w.Code != 200 {
			e := decodeError(t, w.Body.String())
			require.NotEmpty(t, e.Error.Message)
			require.Less(t, w.Code, 500, w.Body.String())
		}
		var req messages.Request
		if json.Unmarshal([]byte(body), &req) != nil || messages.Validate(&req) != nil {
			return
		}
		_, err := json.Marshal(messages.ToChat(&req, &models.Model{ID: "m", Reasoning: true}))
		require.NoError(t, err)
	})
}

// FuzzStream streams arbitrary backend deltas (within and outside the
// chat contract) through the handler: nothing panics, and the client
// always gets a stream that follows the format's event sequence, ended
// by message_stop or by one error event.
func FuzzStream(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5}, "Hello", `{"a":1}`)
	f.Add([]byte{3, 3, 4, 1, 0, 6}, "", "")
	f.Add([]byte{2, 5, 5, 2, 7}, "x", "{")
	f.Fuzz(func(t *testing.T, script []byte, text, args string) {
		if len(script) > 64 {
			script = script[:64]
		}
		var ds []chat.Delta
		calls := 0
		for _, op := range script {
			var d chat.Delta
			switch op % 8 {
			case 0:
				d.Content = text
			case 1:
				d.Reasoning = text
			case 2: // a new tool call
				d.ToolCalls = []chat.ToolCallDelta{{Index: calls, Name: "f", Arguments: args}}
				calls++
			case 3: // more arguments of the last call (or of none)
				d.ToolCalls = []chat.ToolCallDelta{{Index: max(calls-1, 0), Arguments: args}}
			case 4:
				d.Usage = &chat.Usage{PromptTokens: len(text), CompletionTokens: len(args)}
			case 5:
				d.FinishReason = chat.FinishReason([]string{"stop", "length", "tool_calls", "content_filter"}[len(text)%4])
			case 6:
				d.Choice = 1
				d.Content = text
			case 7: // an earlier call's arguments
				d.ToolCalls = []chat.ToolCallDelta{{Index: 0, Arguments: args}}
			}
			ds = append(ds, d)
		}
		w := post(t, newHandlerWith(&scripted{deltas: ds}), helloStream)
		if w.Code != 200 {
			// A backend that breaks the contract at its first delta:
			// a JSON error, as nothing was sent.
			require.Equal(t, 500, w.Code, w.Body.String())
			decodeError(t, w.Body.String())
			return
		}
		evs, err := messages.ParseStream(w.Body.String())
		require.NoError(t, err)
		require.NoError(t, messages.CheckEvents(evs), w.Body.String())
	})
}
