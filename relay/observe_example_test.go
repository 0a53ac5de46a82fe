package relay_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/gatewaykit/gatewaykit/relay"
)

// An attempt observer sees each upstream call of Do, the failed one that
// fails over included: the hook of upstream metrics.
func ExampleWithAttemptObserver() {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[]}`)
	}))
	defer up.Close()
	r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{
		{Name: "primary", BaseURL: down.URL + "/v1"},
		{Name: "secondary", BaseURL: up.URL + "/v1"},
	}}}, relay.WithAttemptObserver(func(_ context.Context, a relay.Attempt) {
		fmt.Printf("%s %s status=%d failover=%t\n", a.Model, a.Upstream, a.Status, a.Failover)
	}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	res, _, err := r.Do(ctx, "m", relay.JSONRequest(ctx, http.MethodGet, "/models", nil))
	if err != nil {
		panic(err)
	}
	res.Body.Close()
	fmt.Println("ready:", r.Ping(ctx) == nil)
	// Output:
	// m primary status=503 failover=true
	// m secondary status=200 failover=false
	// ready: true
}
