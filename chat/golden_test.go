package chat_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// randomIDs matches the random ids of replies and tool calls.
var randomIDs = regexp.MustCompile(`"(chatcmpl-|call_)[A-Z2-7]{26}"`)

// normalizeIDs replaces the random ids of raw reply text with "<prefix>*".
func normalizeIDs(s string) string {
	return randomIDs.ReplaceAllString(s, `"${1}*"`)
}

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk, fixed clock) and compares the
// reply with <case>.response.json, or the stream with <case>.stream.txt,
// after normalizing the random ids. Regenerate with go test ./chat -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	golden.Run(t, func(t *testing.T, name string, body []byte) {
		var req struct {
			Stream        bool
			N             *int
			StreamOptions *struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
		}
		require.NoError(t, json.Unmarshal(body, &req))
		w := post(t, h, string(body))
		require.Equal(t, 200, w.Code, w.Body.String())
		got := normalizeIDs(w.Body.String())
		if !req.Stream {
			golden.JSON(t, golden.Path(name, ".response.json"), []byte(got))
			return
		}
		n := 1
		if req.N != nil {
			n = *req.N
		}
		checkStream(t, readEvents(t, w.Body.String()), n, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		golden.Compare(t, golden.Path(name, ".stream.txt"), got, func(s string) any {
			return readEvents(t, s)
		})
	})
}
