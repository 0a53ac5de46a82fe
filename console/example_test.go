package console_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/gatewaykit/gatewaykit/console"
)

// The console mounted in front of a gateway: the page at /, its files
// under /console/, and every other path the gateway's.
func ExampleNewHandler() {
	gw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the gateway answers "+r.URL.Path, http.StatusNotFound)
	})
	mux := http.NewServeMux()
	console.Register(mux, console.NewHandler(console.Config{AdminURL: "http://127.0.0.1:8090"}))
	mux.Handle("/", gw)

	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, p := range []string{"/", "/console/app.js", "/console/config.json", "/v1/nope"} {
		res, err := http.Get(srv.URL + p)
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if p == "/console/config.json" || p == "/v1/nope" {
			fmt.Printf("%s %d %s", p, res.StatusCode, b)
			if p == "/console/config.json" {
				fmt.Println()
			}
			continue
		}
		fmt.Println(p, res.StatusCode, res.Header.Get("Content-Type"))
	}
	// Output:
	// / 200 text/html; charset=utf-8
	// /console/app.js 200 text/javascript; charset=utf-8
	// /console/config.json 200 {"admin_url":"http://127.0.0.1:8090"}
	// /v1/nope 404 the gateway answers /v1/nope
}
