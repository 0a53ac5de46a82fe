package admin_test

import (
	"context"
	"encoding/json"
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

// Admin-console sessions: minted for an account by the admin API, taken
// in place of an API key where the gateway asks them (its video content
// route, gateway.Config.ContentSessions).
func ExampleSessions() {
	sessions := admin.NewSessions("admin-key-example", 0)
	mux := http.NewServeMux()
	admin.Register(mux, admin.NewHandler(auth.NewMemoryKeyStore(), admin.WithAdminKey("admin-key-example"),
		admin.WithSessions(sessions)))

	req := httptest.NewRequest("POST", "/admin/v1/sessions", strings.NewReader(`{"owner":"acme"}`))
	req.Header.Set("Authorization", "Bearer admin-key-example")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	var s struct{ Cookie, Token string }
	_ = json.Unmarshal(rec.Body.Bytes(), &s)
	fmt.Println(rec.Code, s.Cookie)

	download := httptest.NewRequest("GET", "/v1/videos/task_…/content", nil)
	download.AddCookie(&http.Cookie{Name: s.Cookie, Value: s.Token})
	p, err := sessions.AuthenticateSession(download)
	fmt.Println(p.KeyID, p.Owner, err)
	// Output:
	// 201 gatewaykit_session
	// console:acme acme <nil>
}
