package metrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
)

// The gateway behind the metrics middleware, and the metrics on a mux of
// their own (an admin listener's).
func ExampleMetrics_Middleware() {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	keys := auth.NewMemoryKeyStore()
	_ = keys.Add(context.Background(), "sk-example", auth.Key{ID: "team-a", Quota: auth.UnlimitedQuota()})
	g, err := gateway.New(gateway.Config{
		Keys:    keys,
		Catalog: models.NewMemoryCatalog(demo.TextModels()...),
		Chat:    demo.NewTextBackend().Chat(),
	})
	if err != nil {
		panic(err)
	}
	api := m.Middleware(g)
	admin := http.NewServeMux()
	admin.Handle(metrics.Pattern, metrics.Handler(reg))

	req := httptest.NewRequest("POST", "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-example")
	req.Header.Set("Content-Type", "application/json")
	api.ServeHTTP(httptest.NewRecorder(), req)

	rec := httptest.NewRecorder()
	admin.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "gatewaykit_requests_total") || strings.HasPrefix(sc.Text(), "gatewaykit_request_duration_seconds_count") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// gatewaykit_request_duration_seconds_count{model="demo-chat",route="POST /v1/chat/completions"} 1
	// gatewaykit_requests_total{model="demo-chat",route="POST /v1/chat/completions",status="200"} 1
}
