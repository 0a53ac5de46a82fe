package relay_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// handlerTransport serves upstream calls with an in-process handler, so
// that the examples listen on no port.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func ExampleNewAccessHandler() {
	// The upstream: it names the model and key it received.
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"upstream_saw":%q,"key":%q}`, body, r.Header.Get("Authorization"))
	})
	r, _ := relay.New([]relay.Route{{Model: "text-embedding", Upstreams: []relay.Upstream{
		{BaseURL: "http://upstream.internal/v1", Key: "up-key", Model: "text-embedding-3-small"},
	}}}, relay.WithTransport(handlerTransport{upstream}))
	catalog := models.NewMemoryCatalog(models.Model{ID: "text-embedding", EndpointTypes: []models.EndpointType{models.Compat}})

	mux := http.NewServeMux()
	relay.RegisterAccess(mux, relay.NewAccessHandler(r, catalog))

	req := httptest.NewRequest(http.MethodPost, "/v1/embeddings", strings.NewReader(`{"model":"text-embedding","input":"hello"}`))
	req.Header.Set("Authorization", "Bearer sk-client")
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)

	fmt.Println(rec.Code)
	fmt.Println(rec.Body.String())
	// Output:
	// 200
	// {"upstream_saw":"{\"model\":\"text-embedding-3-small\",\"input\":\"hello\"}","key":"Bearer up-key"}
}

// The auth middleware refuses the access points' requests in each
// format's own error shape with apierrors.ShapeFor.
func Example_authErrorShapes() {
	keys := auth.NewMemoryKeyStore()
	r, _ := relay.New([]relay.Route{{Model: "claude", Upstreams: []relay.Upstream{{BaseURL: "http://upstream.internal/v1"}}}})
	catalog := models.NewMemoryCatalog(models.Model{ID: "claude", EndpointTypes: []models.EndpointType{models.Compat}})
	mux := http.NewServeMux()
	relay.RegisterAccess(mux, relay.NewAccessHandler(r, catalog))
	h := auth.Middleware(keys, auth.WithErrorShape(apierrors.ShapeFor))(mux)

	for _, path := range []string{"/v1/messages", "/v1beta/models/gemini:generateContent", "/v1/embeddings"} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{}`))
		req.Header.Set("x-api-key", "sk-unknown")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 401 {"type":"error","error":{"type":"authentication_error","message":"Incorrect API key provided. You can find your API key on the key page of the user centre."}}
	// 401 {"error":{"code":401,"message":"Incorrect API key provided. You can find your API key on the key page of the user centre.","status":"UNAUTHENTICATED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_API_KEY","domain":"gatewaykit"}]}}
	// 401 {"error":{"message":"Incorrect API key provided. You can find your API key on the key page of the user centre.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}
}
