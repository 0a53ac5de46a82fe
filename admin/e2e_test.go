package admin_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestEndToEnd runs the admin API beside a gateway on one key store, as
// the example server does: a key created over the admin API works on the
// gateway, its usage and cost read back, its budget in US dollars ends
// it with 403 insufficient_quota, raising the budget lets it in again, and
// revoking it makes it 401 invalid_api_key.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	// The cache's TTL is long: a change made through the admin API must be
	// seen at once because it goes through the same cache.
	keys := auth.NewCachedKeyStore(auth.NewMemoryKeyStore(), time.Hour)
	ms := demo.TextModels()
	for i := range ms {
		if ms[i].ID == demo.ChatModel {
			ms[i].Pricing = &models.Pricing{InputPerMillion: 100_000, OutputPerMillion: 200_000} // 0.1 and 0.2 USD a token
		}
	}
	text := demo.NewTextBackend()
	g, err := gateway.New(gateway.Config{Keys: keys, Catalog: models.NewMemoryCatalog(ms...), Chat: text.Chat()})
	require.NoError(t, err)
	api := httptest.NewServer(g)
	t.Cleanup(api.Close)
	adminMux := http.NewServeMux()
	admin.Register(adminMux, admin.NewHandler(keys, admin.WithAdminKey(adminKey)))
	b := &bundle{srv: httptest.NewServer(adminMux)}
	t.Cleanup(b.srv.Close)

	chat := func(t *testing.T, secret string, stream bool) (int, []byte) {
		t.Helper()
		body := fmt.Sprintf(`{"model":%q,"stream":%t,"messages":[{"role":"user","content":"Hello there"}]}`, demo.ChatModel, stream)
		req, err := http.NewRequest(http.MethodPost, api.URL+"/v1/chat/completions", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+secret)
		res, err := api.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, data
	}

	status, _, body := b.do(t, http.MethodPost, "/admin/v1/keys", `{"owner":"acme","allowed_models":["demo-chat"],"budget_usd":100}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var created struct{ ID, Secret string }
	require.NoError(t, json.Unmarshal(body, &created))

	// Two requests, one streamed: each is recorded once, with its cost.
	status, body = chat(t, created.Secret, false)
	require.Equal(t, http.StatusOK, status, "%s", body)
	var reply struct {
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
		}
	}
	require.NoError(t, json.Unmarshal(body, &reply))
	require.Positive(t, reply.Usage.CompletionTokens)
	status, body = chat(t, created.Secret, true)
	require.Equal(t, http.StatusOK, status, "%s", body)

	status, _, body = b.do(t, http.MethodGet, "/admin/v1/usage?group_by=model&key_id="+created.ID, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	var usage struct {
		GroupBy string `json:"group_by"`
		Data    []struct {
			Model        string
			Requests     int64
			InputTokens  int64   `json:"input_tokens"`
			OutputTokens int64   `json:"output_tokens"`
			CostUSD      float64 `json:"cost_usd"`
		}
	}
	require.NoError(t, json.Unmarshal(body, &usage))
	require.Equal(t, "model", usage.GroupBy)
	require.Len(t, usage.Data, 1, "%s", body)
	row := usage.Data[0]
	require.Equal(t, demo.ChatModel, row.Model)
	require.Equal(t, int64(2), row.Requests)
	require.GreaterOrEqual(t, row.InputTokens, reply.Usage.PromptTokens)
	require.GreaterOrEqual(t, row.OutputTokens, reply.Usage.CompletionTokens)
	require.InDelta(t, 0.1*float64(row.InputTokens)+0.2*float64(row.OutputTokens), row.CostUSD, 1e-6)

	var key struct {
		Used    int64   `json:"used"`
		CostUSD float64 `json:"cost_usd"`
	}
	status, _, body = b.do(t, http.MethodGet, "/admin/v1/keys/"+created.ID, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.NoError(t, json.Unmarshal(body, &key))
	require.Equal(t, row.InputTokens+row.OutputTokens, key.Used)
	require.InDelta(t, row.CostUSD, key.CostUSD, 1e-6)

	// A budget below what was spent refuses the key with 403.
	status, _, body = b.do(t, http.MethodPatch, "/admin/v1/keys/"+created.ID, fmt.Sprintf(`{"budget_usd":%g}`, key.CostUSD))
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, body = chat(t, created.Secret, false)
	require.Equal(t, http.StatusForbidden, status, "%s", body)
	require.Equal(t, "insufficient_quota", decodeError(t, body).Error.Code)

	// A budget spent by a request: the next is refused.
	status, _, body = b.do(t, http.MethodPatch, "/admin/v1/keys/"+created.ID, fmt.Sprintf(`{"budget_usd":%g}`, key.CostUSD+0.01))
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, body = chat(t, created.Secret, false)
	require.Equal(t, http.StatusOK, status, "within the budget: %s", body)
	status, body = chat(t, created.Secret, false)
	require.Equal(t, http.StatusForbidden, status, "%s", body)
	require.Equal(t, "insufficient_quota", decodeError(t, body).Error.Code)

	// Revoked: 401 at once on this process.
	status, _, body = b.do(t, http.MethodDelete, "/admin/v1/keys/"+created.ID, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	status, body = chat(t, created.Secret, false)
	require.Equal(t, http.StatusUnauthorized, status, "%s", body)
	require.Equal(t, "invalid_api_key", decodeError(t, body).Error.Code)

	// Its usage stays.
	status, _, body = b.do(t, http.MethodGet, "/admin/v1/usage?group_by=key&key_id="+created.ID, "")
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.Contains(t, string(body), `"requests":3`)
}
