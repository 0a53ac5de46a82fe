package messages_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/models"
)

// The benchmark requests: the conversation of the chat benchmark
// (package chat, BenchmarkStack) in the messages format. The JSON one is
// answered with 61 tokens; the streamed one, with max_tokens 63, with
// message_start, content_block_start, ping, 63 one-token
// content_block_delta events, content_block_stop, message_delta and
// message_stop: 69 events, against the chat stream's 65.
const (
	benchJSON   = `{"model":"demo-chat","max_tokens":1024,"system":"You are a helpful assistant.","messages":[{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchStream = `{"model":"demo-chat","stream":true,"max_tokens":63,"system":"You are a helpful assistant.","messages":[{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	benchEvents = 69
)

// BenchmarkStack measures the whole stack (auth middleware, decoding,
// validation, translation, model check, demo backend, the format's
// encoding, usage charge) for a JSON reply and a 63-token stream, in
// process and over loopback HTTP, each beside a raw net/http handler
// that writes the same bytes (see benchstack.Compare): the per-event
// cost of a translated stream, beside the chat stream's.
func BenchmarkStack(b *testing.B) {
	keys := auth.NewMemoryKeyStore()
	secret, err := auth.NewSecret()
	require.NoError(b, err)
	require.NoError(b, keys.Add(b.Context(), secret, auth.Key{ID: "key_bench", Quota: auth.UnlimitedQuota()}))
	mux := http.NewServeMux()
	messages.Register(mux, messages.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Chat()))
	stack := auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor))(mux)
	for _, tc := range []struct {
		name   string
		body   string
		stream bool
	}{
		{"JSON", benchJSON, false},
		{"Stream63", benchStream, true},
	} {
		benchstack.Compare(b, tc.name, stack, "/v1/messages", tc.body, secret, func(tb testing.TB, w *httptest.ResponseRecorder) {
			if tc.stream {
				require.Equal(tb, benchEvents, strings.Count(w.Body.String(), "\n\n"), w.Body.String())
			}
		})
	}
}
