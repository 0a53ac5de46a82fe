package messages_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
)

// TestStreamKeepsTheBackendsPace checks that the handler gives the chat
// backend its flush (chat.Params.SetFlush), so that the stream keeps its
// pace as it does through the chat handler.
func TestStreamKeepsTheBackendsPace(t *testing.T) {
	t.Parallel()
	version := func(r *http.Request) { r.Header.Set("Anthropic-Version", "2023-06-01") }
	textDeltas := func(text string) int { return strings.Count(text, `"type":"text_delta"`) }
	endpointtest.ChatPaceTest(func(b chat.StreamingBackend) http.Handler { return newHandlerWith(b) },
		endpointtest.Request("/v1/messages", helloStream, version), textDeltas, []int{1, 2, 3, 3}, []int{2, 3}).Run(t)
}
