package gemini_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/models"
)

// FuzzDecodeRequest checks that no body makes the decoder, the
// translation or the handler panic; that a request that translates is a
// chat request that encodes to JSON; and that every answer is a JSON
// reply, a JSON error, or a stream whose every event is JSON.
func FuzzDecodeRequest(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{``, `null`, `[]`, `{}`, `{"contents":[{"parts":[{}]}]}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":"x"}}]},{"parts":[{"function_response":{"name":"f"}}]}]}`,
		`{"contents":[{"parts":[{"text":"\u0000\ud800"}]}],"generation_config":{"candidate_count":8,"max_output_tokens":1}}`,
		`{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":["STRING","NULL"]}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	h := newTestHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := gemini.DecodeRequest(body)
		if err == nil {
			if c, err := gemini.ToChat("demo-chat", req); err == nil {
				_, err := json.Marshal(c)
				require.NoError(t, err)
			}
		}
		for _, path := range []string{":generateContent", ":streamGenerateContent?alt=sse", ":streamGenerateContent"} {
			w := post(t, h, "/v1beta/models/demo-chat"+path, string(body))
			switch {
			case w.Code != http.StatusOK || path == ":generateContent":
				require.True(t, json.Valid(w.Body.Bytes()), "%d %s", w.Code, w.Body.String())
			case strings.HasSuffix(path, "sse"):
				checkFrames(t, w.Body.String())
			default:
				var events []json.RawMessage
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &events), w.Body.String())
			}
		}
	})
}

// checkFrames checks that an SSE body is blocks of one data: line of
// JSON each, ending with a blank line.
func checkFrames(t *testing.T, body string) {
	t.Helper()
	require.True(t, strings.HasSuffix(body, "\n\n"), body)
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(block, "data: ")
		require.True(t, ok, block)
		require.NotContains(t, data, "\n")
		require.True(t, json.Valid([]byte(data)), data)
	}
}

// scripted is a streaming backend that yields the deltas of a script, as
// given: the fuzzer writes the script, contract breaks included.
type scripted []chat.Delta

func (s scripted) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return &chat.Result{Choices: []chat.Output{{Content: "x"}}}, nil
}

func (s scripted) Stream(_ context.Context, _ *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		for _, d := range s {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// script decodes fuzz bytes into deltas: each byte picks a delta's kind
// and choice; text comes from the string.
func script(ops []byte, text string) scripted {
	var out scripted
	for i, op := range ops {
		d := chat.Delta{Choice: int(op>>5) - 1}
		frag := text
		if len(frag) > i%7 {
			frag = frag[:i%7]
		}
		switch op & 7 {
		case 0:
			d.Content = frag
		case 1:
			d.Reasoning = frag
		case 2:
			d.ToolCalls = []chat.ToolCallDelta{{Index: int(op>>3) & 3, Name: frag, Arguments: "{"}}
		case 3:
			d.ToolCalls = []chat.ToolCallDelta{{Index: int(op>>3) & 3, Arguments: frag + "}"}}
		case 4:
			d.FinishReason = chat.FinishReason([]string{"stop", "length", "tool_calls", "content_filter"}[int(op>>3)&3])
		case 5:
			d.Usage = &chat.Usage{PromptTokens: int(op), CompletionTokens: i}
		case 6:
			d.Content, d.FinishReason = frag, chat.FinishStop
		}
		out = append(out, d)
	}
	return out
}

// FuzzStreamTranslation checks that no sequence of backend deltas, valid
// or not, makes the stream translation panic or write an event that is
// not JSON, in either stream form; and that a stream that did not fail
// ends every candidate and carries the usage last.
func FuzzStreamTranslation(f *testing.F) {
	f.Add([]byte{0x20, 0x21, 0x22, 0x23, 0x24, 0x25}, "hello\"\u2028")
	f.Add([]byte{0x20, 0x40, 0x24, 0x44, 0x25}, "two")
	f.Add([]byte{0x22, 0x2b, 0x23, 0x24, 0x00}, `{"a":1}`)
	f.Add([]byte{0x26, 0x20}, "after")
	f.Fuzz(func(t *testing.T, ops []byte, text string) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		mux := http.NewServeMux()
		gemini.Register(mux, gemini.NewHandler(newCatalog(), script(ops, text)))
		body := `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":2,"thinkingConfig":{"includeThoughts":true}}}`
		w := post(t, mux, "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", body)
		if w.Code != 200 {
			// The first delta broke the contract: a JSON error.
			require.Equal(t, 500, w.Code)
			require.True(t, json.Valid(w.Body.Bytes()), w.Body.String())
			return
		}
		checkFrames(t, w.Body.String())
		if !strings.Contains(w.Body.String(), `{"error":`) {
			checkEvents(t, checkSSE(t, w.Body.String()), 2)
		}
		w = post(t, mux, "/v1beta/models/demo-chat:streamGenerateContent", body)
		require.Equal(t, 200, w.Code, w.Body.String())
		var events []json.RawMessage
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &events), w.Body.String())
	})
}

var _ models.Catalog = newCatalog()
