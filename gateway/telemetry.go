package gateway

import (
	"net/http"

	"github.com/gatewaykit/gatewaykit/telemetry"
)

// routed serves mux and records the pattern that served the request in
// its telemetry.Info, if it carries one (ServeMux sets r.Pattern on the
// request it was given).
func routed(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r)
		if info := telemetry.FromContext(r.Context()); info != nil {
			info.Route = r.Pattern
		}
	})
}

// routeOf records, for a request that carries a telemetry.Info but was
// not routed (the auth middleware refused it), the pattern that would
// have served it.
func routeOf(mux *http.ServeMux, r *http.Request) {
	if info := telemetry.FromContext(r.Context()); info != nil && info.Route == "" {
		_, info.Route = mux.Handler(r)
	}
}
