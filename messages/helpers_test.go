package messages_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

func fixedClock() time.Time { return time.Unix(1700000000, 0) }

// videoModel lacks the compat endpoint type.
const videoModel = "demo-video"

func testCatalog() *models.MemoryCatalog {
	list := append(demo.TextModels(), models.Model{ID: videoModel, EndpointTypes: []models.EndpointType{models.CompatVideo}})
	return models.NewMemoryCatalog(list...)
}

// newTestHandler is the handler on the demo backend, eight tokens per
// chunk.
func newTestHandler(opts ...messages.Option) http.Handler {
	return newHandlerWith(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Chat(), opts...)
}

func newHandlerWith(b chat.Backend, opts ...messages.Option) http.Handler {
	opts = append([]messages.Option{endpoint.WithClock(fixedClock)}, opts...)
	return messages.NewHandler(testCatalog(), b, opts...)
}

func post(t testing.TB, h http.Handler, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Anthropic-Version", "2023-06-01")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var randomIDs = regexp.MustCompile(`"(msg_|toolu_|call_)[A-Z2-7]{26}"`)

func normalizeIDs(s string) string { return randomIDs.ReplaceAllString(s, `"${1}*"`) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
