package telemetry_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

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
