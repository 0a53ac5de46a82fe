package completions_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

const videoModel = "demo-video"

func testCatalog() *models.MemoryCatalog {
	return endpointtest.Catalog(models.Model{ID: videoModel, EndpointTypes: []models.EndpointType{models.CompatVideo}})
}

// newTestHandler drives the demo backend (eight tokens per chunk) with
// the test catalogue and the fixed clock.
func newTestHandler(opts ...completions.Option) http.Handler {
	return newHandlerWith(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Completions(), opts...)
}

func newHandlerWith(b completions.Backend, opts ...completions.Option) http.Handler {
	return endpointtest.NewHandler(completions.NewHandler, testCatalog(), b, opts...)
}

// post sends body to POST /v1/completions on h.
func post(t testing.TB, h http.Handler, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	return endpointtest.Post(t, h, "/v1/completions", body, mods...)
}

var errorBody = endpointtest.ErrorBody

type event = endpointtest.Event

var readEvents = endpointtest.ReadEvents

var normalizeIDs = golden.NormalizeIDs("cmpl-")

// checkStream checks the rules of spec §2.3 and §6 on a legacy stream: one
// id, object text_completion, no model, one choice per chunk with text and
// finish_reason (null except in each choice's last chunk), usage only in
// a final chunk with no choices and only when asked, no "error" key, and
// [DONE] at the end — or one error event and no [DONE].
func checkStream(t testing.TB, evs []event, choices int, includeUsage bool) {
	t.Helper()
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	failed := last.JSON != nil && last.JSON["error"] != nil
	if !failed {
		require.Equal(t, sse.DoneData, last.Raw, "the stream ends with [DONE]")
	}
	evs = evs[:len(evs)-1]
	var id string
	finished := make([]bool, choices)
	sawUsage := false
	for i, ev := range evs {
		c := ev.JSON
		require.NotNil(t, c, "event %d is JSON", i)
		require.NotContains(t, c, "error")
		require.NotContains(t, c, "model", "legacy chunks carry no model")
		require.Equal(t, completions.ObjectCompletion, c["object"])
		if id == "" {
			id = c["id"].(string)
			require.True(t, strings.HasPrefix(id, completions.IDPrefix), id)
		}
		require.Equal(t, id, c["id"])
		require.False(t, sawUsage, "the usage chunk is the last one")
		cs := c["choices"].([]any)
		if _, ok := c["usage"]; ok {
			require.True(t, includeUsage)
			require.Empty(t, cs)
			sawUsage = true
			continue
		}
		require.Len(t, cs, 1)
		ch := cs[0].(map[string]any)
		k := int(ch["index"].(float64))
		require.False(t, finished[k], "no chunk after a choice's finish reason")
		require.Contains(t, ch, "text")
		require.Contains(t, ch, "finish_reason")
		finished[k] = ch["finish_reason"] != nil
	}
	if failed {
		return
	}
	require.Equal(t, includeUsage, sawUsage)
	for k := range choices {
		require.True(t, finished[k], "choice %d finished", k)
	}
}
