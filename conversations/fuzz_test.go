package conversations_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
)

// FuzzDecodeRequests checks that no body makes the decoders or the
// handler panic on the routes that take one (create, update, add items),
// that every answer is JSON with a 200 or a 400 (a 404 for the routes of
// an unknown conversation), and that a request that decodes encodes to
// JSON that decodes to the same request.
func FuzzDecodeRequests(f *testing.F) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(f, err)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, s := range []string{``, `null`, `[]`, `{}`, `{"items":null}`, `{"items":[{}]}`, `{"items":[{"role":"user","content":7}]}`,
		`{"metadata":{"k":null}}`, `{"items":[{"type":"function_call_output","call_id":"c","output":[]}]}`} {
		f.Add([]byte(s))
	}
	g := newGateway(f)
	id := g.create(f, `{}`)
	f.Fuzz(func(t *testing.T, body []byte) {
		endpointtest.RoundTrip[conversations.CreateRequest](t, body)
		endpointtest.RoundTrip[conversations.AddItemsRequest](t, body)
		for _, rt := range []struct {
			path     string
			statuses []int
		}{
			{"/v1/conversations", []int{200, 400}},
			{"/v1/conversations/" + id, []int{200, 400}},
			{"/v1/conversations/" + id + "/items", []int{200, 400}},
			{"/v1/conversations/conv_missing/items", []int{400, 404}},
		} {
			w := g.do(t, http.MethodPost, rt.path, string(body))
			require.Contains(t, rt.statuses, w.Code, "%s: %s", rt.path, w.Body)
			require.True(t, json.Valid(w.Body.Bytes()), "%s", w.Body)
		}
	})
}
