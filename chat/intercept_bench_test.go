package chat_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
)

// BenchmarkInterceptors measures the chat handler alone (in process, over
// the demo backend) for the JSON reply and the 64-chunk stream of
// BenchmarkStack: without interceptors, with an empty chain
// (WithInterceptors()), which must cost nothing, with one interceptor
// that passes the call on, and with one that sets an edit hook and a
// done hook (which sees the whole text).
func BenchmarkInterceptors(b *testing.B) {
	pass := func(next endpoint.Func) endpoint.Func { return next }
	observe := func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			r, err := next(ctx, c)
			if err == nil {
				r.EditText(func(_ int, s string) string { return s })
				r.OnDone(func(context.Context, *endpoint.Done) {})
			}
			return r, err
		}
	}
	for _, chain := range []struct {
		name string
		opts []chat.Option
	}{
		{"None", nil},
		{"Empty", []chat.Option{endpoint.WithInterceptors()}},
		{"Pass", []chat.Option{endpoint.WithInterceptors(pass)}},
		{"Observe", []chat.Option{endpoint.WithInterceptors(observe)}},
	} {
		for _, tc := range []struct {
			name string
			body string
		}{{"JSON", benchJSON}, {"Stream64", benchStream}} {
			b.Run(tc.name+"/"+chain.name, func(b *testing.B) {
				h := chat.NewHandler(models.NewMemoryCatalog(demo.TextModels()...), demo.NewTextBackend().Chat(), chain.opts...)
				b.ReportAllocs()
				for b.Loop() {
					w := httptest.NewRecorder()
					r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(tc.body))
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatal(w.Code, w.Body.String())
					}
				}
			})
		}
	}
}
