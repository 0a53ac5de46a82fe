package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/benchstack"
	"github.com/gatewaykit/gatewaykit/models"
)

// benchChat is the non-streaming request of the load tool's chat scenario,
// answered by the demo backend with 61 tokens (~600 bytes).
const benchChat = `{"model":"demo-chat","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`

// newBenchGateway is the gateway as the load tool wires it: the demo
// configuration and backends, the access log on (its logger discards),
// and a per-key rate limit too high to refuse anything, so that the
// limiter runs for every request.
func newBenchGateway(tb testing.TB) (http.Handler, string) {
	c := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(tb.Context(), c.Keys)
	require.NoError(tb, err)
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(c.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(),
		RateLimit:   auth.Limit{Requests: 1 << 30, Period: time.Second},
		AccessLog:   true,
	})
	require.NoError(tb, err)
	return g, gateway.DemoKeys()[0].Secret
}

// BenchmarkGateway measures non-streaming chat through the whole gateway
// (access log, auth and rate limit, mux, chat handler, demo backend,
// usage charge), called in process and over loopback HTTP, each beside a
// raw net/http handler that writes the same headers and bytes in the same
// run (metrics: see benchstack.Compare).
func BenchmarkGateway(b *testing.B) {
	g, secret := newBenchGateway(b)
	benchstack.Compare(b, "Chat", g, "/v1/chat/completions", benchChat, secret, nil)
}
