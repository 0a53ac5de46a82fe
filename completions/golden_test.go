package completions_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk, fixed clock) and compares the
// reply with <case>.response.json, or the stream with <case>.stream.txt,
// after normalizing the random ids. Regenerate with
// go test ./completions -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	golden.Run(t, func(t *testing.T, name string, body []byte) {
		var req struct {
			endpointtest.StreamRequest
			Prompt json.RawMessage
		}
		require.NoError(t, json.Unmarshal(body, &req))
		w := post(t, h, string(body))
		require.Equal(t, 200, w.Code, w.Body.String())
		got := normalizeIDs(w.Body.String())
		if req.Stream {
			choices := req.Choices()
			var prompts []string
			if json.Unmarshal(req.Prompt, &prompts) == nil {
				choices *= len(prompts)
			}
			checkStream(t, readEvents(t, w.Body.String()), choices, req.IncludeUsage())
		}
		golden.Reply(t, name, got, req.Stream, func(s string) any { return readEvents(t, s) })
	})
}
