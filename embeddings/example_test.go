package embeddings_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/models"
)

func ExampleNewHandler() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	embeddings.Register(mux, embeddings.NewHandler(catalog, demo.NewEmbeddingBackend()))

	req := httptest.NewRequest("POST", "/v1/embeddings", strings.NewReader(
		`{"model":"demo-embedding","input":"hello world","dimensions":3}`))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	fmt.Println(w.Code, w.Body)
	// Output:
	// 200 {"object":"list","data":[{"object":"embedding","index":0,"embedding":[-0.31622776,0,-0.9486833]}],"model":"demo-embedding","usage":{"prompt_tokens":2,"total_tokens":2}}
}

func ExampleNewHandler_base64() {
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	h := embeddings.NewHandler(catalog, demo.NewEmbeddingBackend())
	req := httptest.NewRequest("POST", "/v1/embeddings", strings.NewReader(
		`{"model":"demo-embedding","input":"hello world","dimensions":3,"encoding_format":"base64"}`))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	fmt.Println(w.Body)
	// Output:
	// {"object":"list","data":[{"object":"embedding","index":0,"embedding":"m+ihvgAAAADp3HK/"}],"model":"demo-embedding","usage":{"prompt_tokens":2,"total_tokens":2}}
}
