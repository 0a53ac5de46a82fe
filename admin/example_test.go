package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
)

// An admin API beside the gateway's key store: create a key, then read
// its usage by model.
func ExampleNewHandler() {
	keys := auth.NewMemoryKeyStore() // the store the gateway's auth.Middleware uses
	mux := http.NewServeMux()
	admin.Register(mux, admin.NewHandler(keys, admin.WithAdminKey("admin-key-example")))

	call := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer admin-key-example")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	rec := call("POST", "/admin/v1/keys", `{"owner":"acme","quota":100000,"rate_limit":"5/s","budget_usd":10}`)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"secret":"sk-`))

	// The gateway's handlers settle each request with its model, tokens
	// and cost; here, one request by hand.
	k, _ := keys.ListKeys(context.Background(), auth.ListKeysParams{})
	_, _ = keys.Settle(context.Background(), auth.SettleParams{KeyID: k[0].ID, Used: 40,
		Model: "demo-chat", InputTokens: 10, OutputTokens: 30, CostUSD: 0.00002})

	rec = call("GET", "/admin/v1/usage?group_by=model", "")
	fmt.Print(rec.Body.String())
	// Output:
	// 201 true
	// {"object":"list","group_by":"model","data":[{"model":"demo-chat","requests":1,"input_tokens":10,"output_tokens":30,"cost_usd":0.00002}]}
}
