package chat_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
)

// The benchmark requests (see decode_internal_test.go): the JSON one is
// answered with 61 tokens (~600 bytes); the streamed one with 64 chunks
// (63 one-token content chunks and the finish chunk), then [DONE].
var (
	benchJSON   = chat.BenchJSON
	benchStream = chat.BenchStream
)

// benchEvents is the number of events of the streamed reply: 64 chunks
// and [DONE].
const benchEvents = 65

// newBenchStack is the whole stack: auth middleware with an in-memory key
// store, a ServeMux, the chat handler and the demo backend.
func newBenchStack(tb testing.TB) (http.Handler, string) {
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(tb, err)
	require.NoError(tb, keys.Add(tb.Context(), secret, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Chat()))
	return auth.Middleware(keys)(mux), secret
}

// BenchmarkStack measures the whole stack (auth middleware, decoding,
// validation, model check, demo backend, encoding, usage charge) for a
// JSON reply and for a 64-chunk stream, called in process and over
// loopback HTTP, each beside a raw net/http handler that writes the same
// bytes in the same run (metrics: see benchstack.Compare).
func BenchmarkStack(b *testing.B) {
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
	}{
		{"JSON", benchJSON, false},
		{"Stream64", benchStream, true},
	} {
		stack, secret := newBenchStack(b)
		benchstack.Compare(b, tc.name, stack, "/v1/chat/completions", tc.body, secret, func(tb testing.TB, w *httptest.ResponseRecorder) {
			if tc.stream {
				require.Equal(tb, benchEvents, strings.Count(w.Body.String(), "\n\n"))
			}
		})
	}
}
