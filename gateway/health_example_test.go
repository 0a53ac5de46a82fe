package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
)

// cache is a dependency whose server does not answer.
type cache struct{}

func (cache) Ping(context.Context) error {
	return errors.New("dial tcp 10.0.0.9:6379: connection refused")
}

// /healthz and /readyz answer without credentials; a dependency that
// does not answer makes /readyz a 503 that names it.
func ExampleConfig_readyChecks() {
	g, err := gateway.New(gateway.Config{
		Keys:        auth.NewMemoryKeyStore(),
		Catalog:     models.NewMemoryCatalog(demo.TextModels()...),
		ReadyChecks: map[string]gateway.Pinger{"cache": cache{}},
	})
	if err != nil {
		panic(err)
	}
	for _, path := range []string{gateway.HealthPath, gateway.ReadyPath} {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		fmt.Print(rec.Code, " ", rec.Body.String())
	}
	// Output:
	// 200 {"status":"ok"}
	// 503 {"error":{"message":"Not ready: cache did not answer.","type":"server_error","param":null,"code":"service_unavailable"}}
}

// A dependency that every replica shares (here a Redis limiter that does
// not answer) is named in /readyz's 200, but does not make the replica
// unready: its outage must not take the whole fleet out of service.
func ExampleShared() {
	g, err := gateway.New(gateway.Config{
		Keys:        auth.NewMemoryKeyStore(),
		Catalog:     models.NewMemoryCatalog(demo.TextModels()...),
		ReadyChecks: map[string]gateway.Pinger{"redis": gateway.Shared(cache{})},
	})
	if err != nil {
		panic(err)
	}
	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("GET", gateway.ReadyPath, nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// 200 {"status":"ready","unavailable":["redis"]}
}
