package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// The whole API in one handler: keys, the model catalogue and the demo
// text backend.
func ExampleNew() {
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	_ = keys.Add(ctx, "sk-example", auth.Key{ID: "team-a", Quota: auth.UnlimitedQuota()})
	text := demo.NewTextBackend()

	g, err := gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(demo.TextModels()...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
	})
	if err != nil {
		panic(err)
	}

	req := httptest.NewRequest("POST", "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"Hello"}]}`))
	req.Header.Set("Authorization", "Bearer sk-example")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output: 200 application/json
}

// The limits of the example servers, to copy: headers read within 10s,
// idle keep-alive connections closed after 2 minutes, headers of at most
// 64 KiB (431 beyond). Serve it through gateway.LimitListener to bound the
// connections too.
func ExampleNewServer() {
	srv := gateway.NewServer("127.0.0.1:8080", http.NotFoundHandler())
	fmt.Println(srv.ReadHeaderTimeout, srv.IdleTimeout, srv.MaxHeaderBytes, gateway.DefaultMaxConns)
	// Output: 10s 2m0s 65536 1024
}

// LimitBodies in front of endpoint handlers mounted one by one: the body
// read deadline, and a bound on the bytes of bodies in flight.
func ExampleLimitBodies() {
	keys := auth.NewMemoryKeyStore()
	_ = keys.Add(context.Background(), "sk-example", auth.Key{ID: "k1", Quota: auth.UnlimitedQuota()})
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	mux := http.NewServeMux()
	chat.Register(mux, chat.NewHandler(catalog, demo.NewTextBackend().Chat()))
	limits := gateway.LimitBodies(gateway.BodyLimits{ReadTimeout: 30 * time.Second, MaxBytesInFlight: 1 << 10})
	h := auth.Middleware(keys)(limits(mux))

	// A body larger than the room left is refused; the client may retry.
	body := `{"model":"demo-chat","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`
	r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer sk-example")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("Retry-After"), strings.Contains(w.Body.String(), `"code":"service_unavailable"`))
	// Output:
	// 503 1 true
}
