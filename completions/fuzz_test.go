package completions_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// FuzzDecodeRequest checks that no body makes the request decoder or the
// handler panic, that every answer is a JSON reply, a JSON error or a
// well-formed stream, and that a request that decodes encodes to JSON
// that decodes to the same request.
func FuzzDecodeRequest(f *testing.F) {
	golden.Seed(f)
	for _, s := range []string{``, `null`, `{}`, `{"model":"demo-chat","prompt":[1]}`, `{"model":"demo-chat","prompt":["a",null],"n":64,"stream":true}`} {
		f.Add([]byte(s))
	}
	h := newTestHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		endpointtest.RoundTrip[completions.Request](t, body)
		endpointtest.CheckAnswer(t, post(t, h, string(body)), func(s string) { readEvents(t, s) }, 200, 400, 404)
	})
}
