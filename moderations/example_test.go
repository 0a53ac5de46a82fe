package moderations_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
)

func ExampleNewHandler() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	moderations.Register(mux, moderations.NewHandler(catalog, demo.NewModerationBackend()))

	req := httptest.NewRequest("POST", "/v1/moderations", strings.NewReader(
		`{"model":"demo-moderation","input":["Have a nice day","I will threaten you"]}`))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	var reply struct {
		Results []struct {
			Flagged    bool            `json:"flagged"`
			Categories map[string]bool `json:"categories"`
		} `json:"results"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &reply)
	for _, r := range reply.Results {
		var flagged []string
		for _, c := range moderations.Categories() {
			if r.Categories[c] {
				flagged = append(flagged, c)
			}
		}
		fmt.Println(r.Flagged, flagged)
	}
	// Output:
	// false []
	// true [harassment harassment/threatening]
}
