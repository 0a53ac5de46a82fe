package telemetry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// A middleware puts an Info in the request's context and reads it once
// the request is served.
func ExampleNewContext() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		telemetry.SetModel(r.Context(), "demo-chat") // as the handlers do
	})
	observed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := new(telemetry.Info)
		handler.ServeHTTP(w, r.WithContext(telemetry.NewContext(r.Context(), info)))
		fmt.Println("model:", info.Model)
	})
	observed.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/v1/chat/completions", nil))
	// Output:
	// model: demo-chat
}

// The kit's handlers fill the Info on any router, without package
// gateway: here chat's handler on a plain ServeMux.
func Example_withoutGateway() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	chat.Register(mux, chat.NewHandler(catalog, demo.NewTextBackend().Chat()))

	info := new(telemetry.Info)
	req := httptest.NewRequest("POST", "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	mux.ServeHTTP(httptest.NewRecorder(), req.WithContext(telemetry.NewContext(req.Context(), info)))
	fmt.Printf("route %q, model %s, tokens %d in, %d out\n", info.Route, info.Model, info.InputTokens, info.OutputTokens)
	// Output:
	// route "POST /v1/chat/completions", model demo-chat, tokens 1 in, 58 out
}
