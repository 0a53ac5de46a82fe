package gemini_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
)

// TestStreamKeepsTheBackendsPace checks that the handler gives the chat
// backend its flush (chat.Params.SetFlush), so that the stream keeps its
// pace as it does through the chat handler. Every event counts, the
// finishing one included.
func TestStreamKeepsTheBackendsPace(t *testing.T) {
	t.Parallel()
	const path = "/v1beta/models/demo-chat:streamGenerateContent?alt=sse"
	h := func(b chat.StreamingBackend) http.Handler { return gemini.NewHandler(newCatalog(), b) }
	events := func(text string) int { return strings.Count(text, "data: ") }
	endpointtest.ChatPaceTest(h, endpointtest.Request(path, `{"contents":[{"parts":[{"text":"hi"}]}]}`), events, []int{1, 2, 3, 4}, []int{2, 4}).Run(t)
}
