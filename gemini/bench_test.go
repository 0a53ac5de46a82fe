package gemini_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
)

// The benchmark requests: the conversation of chat's BenchmarkStack (a
// system and a user message), streamed with 63 output tokens, one token
// per event. The Gemini-style stream has 64 events (63 text events and
// the one that ends the candidate, with the usage); the chat stream 65
// (63 content chunks, the finish chunk and [DONE]).
const (
	benchGemini = `{"systemInstruction":{"parts":[{"text":"You are a helpful assistant."}]},` +
		`"contents":[{"role":"user","parts":[{"text":"Hello! Please count to twenty for me, in words."}]}],` +
		`"generationConfig":{"maxOutputTokens":63}}`
	benchChat = `{"model":"demo-chat","max_tokens":63,"stream":true,"messages":[` +
		`{"role":"system","content":"You are a helpful assistant."},` +
		`{"role":"user","content":"Hello! Please count to twenty for me, in words."}]}`
)

// newBenchStack is the whole stack: auth middleware with an in-memory key
// store, a ServeMux, the Gemini-style and chat handlers and the demo
// backend.
func newBenchStack(tb testing.TB) (http.Handler, string) {
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(tb, err)
	require.NoError(tb, keys.Add(tb.Context(), secret, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	backend := demo.NewTextBackend().Chat()
	mux := http.NewServeMux()
	gemini.Register(mux, gemini.NewHandler(catalog, backend))
	chat.Register(mux, chat.NewHandler(catalog, backend))
	return auth.Middleware(keys)(mux), secret
}

// BenchmarkStream measures the per-event cost of the translated stream
// (:streamGenerateContent?alt=sse over the demo chat backend) beside the
// chat stream of the same reply, in the same run, each against a raw
// net/http handler that writes the same bytes (benchstack.Compare: the
// ns/event and x-raw metrics).
func BenchmarkStream(b *testing.B) {
	for _, tc := range []struct {
		name, path, body string
		events           int
	}{
		{"Gemini64", "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", benchGemini, 64},
		{"Chat65", "/v1/chat/completions", benchChat, 65},
	} {
		stack, secret := newBenchStack(b)
		benchstack.Compare(b, tc.name, stack, tc.path, tc.body, secret, func(tb testing.TB, w *httptest.ResponseRecorder) {
			require.Equal(tb, tc.events, strings.Count(w.Body.String(), "\n\n"), w.Body.String())
		})
	}
}
