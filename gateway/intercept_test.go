package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestConfigInterceptors checks that the interceptors of the Config run
// in every handler that the gateway mounts: a guardrail refuses a banned
// prompt in each family's shape, and the families seen are those of the
// calls.
func TestConfigInterceptors(t *testing.T) {
	t.Parallel()
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, keys.Add(t.Context(), "sk-test", auth.Key{ID: "team-a", Quota: auth.UnlimitedQuota()}))
	var mu sync.Mutex
	var families []string
	guard := func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			mu.Lock()
			families = append(families, c.Family)
			mu.Unlock()
			if strings.Contains(c.Prompt(), "plutonium") {
				return nil, apierrors.InvalidRequest("", "refused")
			}
			return next(ctx, c)
		}
	}
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{
		Keys:         keys,
		Catalog:      models.NewMemoryCatalog(append(demo.TextModels(), demo.AccessModels()...)...),
		Chat:         text.Chat(),
		Completions:  text.Completions(),
		Responses:    text.Responses(),
		Embeddings:   demo.NewEmbeddingBackend(),
		Interceptors: []endpoint.Interceptor{guard},
	})
	require.NoError(t, err)
	bearer := func(r *http.Request) { r.Header.Set("Authorization", "Bearer sk-test") }
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"plutonium"}]}`,
			`{"error":{"message":"refused","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`},
		{"/v1/completions", `{"model":"demo-instruct","prompt":"plutonium"}`,
			`{"error":{"message":"refused","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`},
		{"/v1/responses", `{"model":"demo-chat","input":"plutonium"}`,
			`{"error":{"message":"refused","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`},
		{"/v1/messages", `{"model":"demo-chat","max_tokens":8,"messages":[{"role":"user","content":"plutonium"}]}`,
			`{"type":"error","error":{"type":"invalid_request_error","message":"refused"}}`},
		{"/v1/embeddings", `{"model":"demo-embedding","input":"plutonium"}`,
			`{"error":{"message":"refused","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`},
	} {
		w := endpointtest.Post(t, g, tc.path, tc.body, bearer)
		require.Equal(t, http.StatusBadRequest, w.Code, tc.path+": "+w.Body.String())
		require.JSONEq(t, tc.want, w.Body.String(), tc.path)
	}
	w := endpointtest.Post(t, g, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}`, bearer)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"chat", "completions", "responses", "messages", "embeddings", "chat"}, families)
}
