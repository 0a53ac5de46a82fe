package messages_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

// videoModel lacks the compat endpoint type.
const videoModel = "demo-video"

func testCatalog() *models.MemoryCatalog {
	return endpointtest.Catalog(models.Model{ID: videoModel, EndpointTypes: []models.EndpointType{models.CompatVideo}})
}

// newTestHandler is the handler on the demo backend, eight tokens per
// chunk.
func newTestHandler(opts ...messages.Option) http.Handler {
	return newHandlerWith(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Chat(), opts...)
}

func newHandlerWith(b chat.Backend, opts ...messages.Option) http.Handler {
	return endpointtest.NewHandler(messages.NewHandler, testCatalog(), b, opts...)
}

func post(t testing.TB, h http.Handler, body string) *httptest.ResponseRecorder {
	t.Helper()
	return endpointtest.Post(t, h, "/v1/messages", body, func(r *http.Request) {
		r.Header.Set("Anthropic-Version", "2023-06-01")
	})
}

var normalizeIDs = golden.NormalizeIDs("msg_", "toolu_", "call_")

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
