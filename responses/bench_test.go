package responses_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

// The benchmark requests, as chat's: the JSON one is answered with about
// 60 tokens (~1.1 KB); the streamed one with 63 one-token deltas among 71
// events. Neither is stored, so that the store does not grow with b.N.
const (
	benchJSON   = `{"model":"demo-chat","store":false,"instructions":"You are a helpful assistant.","input":[{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchStream = `{"model":"demo-chat","store":false,"stream":true,"max_output_tokens":63,"instructions":"You are a helpful assistant.","input":[{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
)

// newBenchStack is the whole stack: auth middleware with an in-memory key
// store, a ServeMux, the responses handler and the demo backend.
func newBenchStack(tb testing.TB) (http.Handler, string) {
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(tb, err)
	require.NoError(tb, keys.Add(tb.Context(), secret, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Responses()))
	return auth.Middleware(keys)(mux), secret
}

// BenchmarkStack measures the whole stack (auth middleware, decoding,
// validation, model check, demo backend, encoding, usage charge) for a
// JSON reply and for a stream of 71 events and [DONE], called in process and over
// loopback HTTP, each beside a raw net/http handler that writes the same
// bytes in the same run (metrics: see benchstack.Compare).
func BenchmarkStack(b *testing.B) {
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
	}{
		{"JSON", benchJSON, false},
		{"Stream71", benchStream, true},
	} {
		stack, secret := newBenchStack(b)
		benchstack.Compare(b, tc.name, stack, "/v1/responses", tc.body, secret, func(tb testing.TB, w *httptest.ResponseRecorder) {
			if tc.stream {
				require.Equal(tb, 72, strings.Count(w.Body.String(), "\n\n")) // 71 events and [DONE]
			}
		})
	}
}

// BenchmarkConversation measures a request that continues a stored
// conversation of depth earlier turns through previous_response_id, in
// process, with the demo backend: the cost of resolving the chain from
// the in-memory store and of the longer input.
func BenchmarkConversation(b *testing.B) {
	for _, depth := range []int{1, 10, 100} {
		b.Run(fmt.Sprint("depth=", depth), func(b *testing.B) {
			h := responses.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Responses())
			prev := ""
			for i := range depth {
				body := fmt.Sprintf(`{"model":"demo-chat","input":"Turn %d of the conversation."`, i)
				if prev != "" {
					body += `,"previous_response_id":"` + prev + `"`
				}
				w := post(b, h, body+`}`)
				require.Equal(b, 200, w.Code, w.Body.String())
				prev = decode(b, w.Body.String())["id"].(string)
			}
			body := `{"model":"demo-chat","store":false,"input":"And now?","previous_response_id":"` + prev + `"}`
			do := benchstack.InProcess(h, "/v1/responses", body, "")
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				do(b)
			}
		})
	}
}
