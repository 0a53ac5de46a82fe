package responses_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/responses"
)

// normalizeIDs replaces the random ids of responses, items and calls in
// raw reply text with "<prefix>*".
var normalizeIDs = golden.NormalizeIDs("resp_", "msg_", "fc_", "rs_", "call_", "cmp_")

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk, fixed clock) and compares the
// reply with <case>.response.json, or the stream with <case>.stream.txt,
// after normalizing the random ids. Cases named compact_* go to POST
// /v1/responses/compact; cases named background_* go to a handler with a
// Background whose workers do not run (the reply is the queued
// response). Regenerate with go test ./responses -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	bg := newTestHandler(responses.WithBackground(responses.NewBackground(responses.NewMemoryRunStore())))
	golden.Run(t, func(t *testing.T, name string, body []byte) {
		var req struct{ Stream bool }
		require.NoError(t, json.Unmarshal(body, &req))
		route := "/v1/responses"
		if strings.HasPrefix(name, "compact_") {
			route += "/compact"
		}
		served := h
		if strings.HasPrefix(name, "background_") {
			served = bg
		}
		w := do(t, served, http.MethodPost, route, string(body))
		require.Equal(t, 200, w.Code, w.Body.String())
		got := normalizeIDs(w.Body.String())
		if req.Stream {
			checkStream(t, readEvents(t, w.Body.String()))
		}
		golden.Reply(t, name, got, req.Stream, func(s string) any { return readEvents(t, s) })
	})
}
