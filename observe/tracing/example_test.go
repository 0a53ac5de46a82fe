package tracing_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/tracing"
)

// The gateway behind the tracing middleware: one span per request, named
// after its route, with the GenAI attributes. (A program takes its
// provider from tracing.FromEnv; here spans go to memory.)
func ExampleTracing_Middleware() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

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
	api := tracing.New(tp).Middleware(g)

	req := httptest.NewRequest("POST", "/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer sk-example")
	req.Header.Set("Content-Type", "application/json")
	api.ServeHTTP(httptest.NewRecorder(), req)

	for _, s := range spans.GetSpans() {
		fmt.Println(s.Name)
		for _, kv := range s.Attributes {
			if strings.HasPrefix(string(kv.Key), "gen_ai.operation") || strings.HasPrefix(string(kv.Key), "gen_ai.request") {
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
			}
		}
	}
	// Output:
	// POST /v1/chat/completions
	//   gen_ai.operation.name=chat
	//   gen_ai.request.model=demo-chat
}
