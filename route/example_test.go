package route_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
)

func ExampleList() {
	health := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, rt := range route.List(health, "GET /healthz", "POST /v1/feedback") {
		fmt.Println(rt.Method, rt.Path)
	}
	// Output:
	// GET /healthz
	// HEAD /healthz
	// POST /v1/feedback
}

// The routes of the model list and chat completions, mounted one by one
// as on any router (here a ServeMux), and route.Unrouted for what no
// route serves.
func ExampleUnrouted() {
	catalog := models.NewMemoryCatalog(demo.TextModels()...)
	routes := slices.Concat(
		models.Routes(models.NewHandler(catalog)),
		chat.Routes(chat.NewHandler(catalog, demo.NewTextBackend().Chat())),
	)
	mux := http.NewServeMux()
	for _, rt := range routes {
		if rt.Method != http.MethodHead { // ServeMux's GET routes serve HEAD
			mux.Handle(rt.Method+" "+rt.Path, rt.Handler)
		}
	}
	mux.Handle("/", route.Unrouted(routes))

	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "/v1/chat/completions", nil),
		httptest.NewRequest("GET", "/v1/nope", nil),
	} {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, r)
		fmt.Print(rec.Code, " ", rec.Header().Get("Allow"), " ", rec.Body.String())
	}
	// Output:
	// 405 POST {"error":{"message":"The method GET is not allowed on /v1/chat/completions; use POST.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}
	// 404  {"error":{"message":"Unknown request URL: GET /v1/nope. Please check the URL and the method.","type":"invalid_request_error","param":null,"code":"not_found"}}
}
