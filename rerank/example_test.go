package rerank_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/rerank"
)

func ExampleNewHandler() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	rerank.Register(mux, rerank.NewHandler(catalog, demo.NewRerankBackend()))

	req := httptest.NewRequest("POST", "/v1/rerank", strings.NewReader(
		`{"model":"demo-rerank","query":"capital of France","top_n":2,
		  "documents":["Cats sleep a lot.","Paris is the capital of France.","Berlin is a capital."]}`))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	var reply rerank.Reply
	_ = json.Unmarshal(w.Body.Bytes(), &reply)
	for _, r := range reply.Results {
		fmt.Println(r.Index, r.RelevanceScore, r.Document.Text)
	}
	// Output:
	// 1 0.7071 Paris is the capital of France.
	// 2 0.2887 Berlin is a capital.
}
