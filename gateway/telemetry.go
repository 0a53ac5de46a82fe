package gateway

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// usageKeys is the gateway's KeyStore: Config.Keys, whose Settle adds the
// tokens of the usage it records to the telemetry.Info of the request
// being settled, if its context carries one. The handlers settle on the
// request's goroutine before they return, with a context that keeps the
// request's values; the video runner settles outside any request, and
// records nothing there. It adds no call to the hot path: one context
// lookup per settlement.
type usageKeys struct{ auth.KeyStore }

// LookupID passes auth.IDLookup through, for auth.Identities, or returns
// an error wrapping auth.ErrUnsupported if Config.Keys is no IDLookup.
func (k usageKeys) LookupID(ctx context.Context, id string) (*auth.Key, error) {
	ids, ok := k.KeyStore.(auth.IDLookup)
	if !ok {
		return nil, fmt.Errorf("gateway: the key store cannot look keys up by id: %w", auth.ErrUnsupported)
	}
	return ids.LookupID(ctx, id)
}

// Unwrap returns Config.Keys (auth.Identities asks it whether it finds
// keys by id).
func (k usageKeys) Unwrap() auth.KeyStore { return k.KeyStore }

func (k usageKeys) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	q, err := k.KeyStore.Settle(ctx, p)
	if info := telemetry.FromContext(ctx); info != nil {
		info.InputTokens += max(p.InputTokens, 0)
		info.OutputTokens += max(p.OutputTokens, 0)
	}
	return q, err
}

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
