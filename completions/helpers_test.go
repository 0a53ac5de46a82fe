package completions_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

func fixedClock() time.Time { return time.Unix(1700000000, 0) }

const videoModel = "demo-video"

func testCatalog() *models.MemoryCatalog {
	list := append(demo.TextModels(), models.Model{ID: videoModel, EndpointTypes: []models.EndpointType{models.CompatVideo}})
	return models.NewMemoryCatalog(list...)
}

// newTestHandler drives the demo backend (eight tokens per chunk) with
// the test catalogue and the fixed clock.
func newTestHandler(opts ...completions.Option) http.Handler {
	return newHandlerWith(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Completions(), opts...)
}

func newHandlerWith(b completions.Backend, opts ...completions.Option) http.Handler {
	opts = append([]completions.Option{endpoint.WithClock(fixedClock)}, opts...)
	return completions.NewHandler(testCatalog(), b, opts...)
}

func post(t testing.TB, h http.Handler, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for _, m := range mods {
		m(r)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func errorBody(message, typ, param, code string) string {
	var p any
	if param != "" {
		p = param
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": typ, "param": p, "code": code}})
	return string(b)
}

type event struct {
	Raw  string
	JSON map[string]any
}

func readEvents(t testing.TB, body string) []event {
	t.Helper()
	var evs []event
	for ev, err := range sse.Read(strings.NewReader(body)) {
		require.NoError(t, err)
		e := event{Raw: ev.Data}
		if !ev.IsDone() {
			require.NoError(t, json.Unmarshal([]byte(ev.Data), &e.JSON), "event %q", ev.Data)
		}
		evs = append(evs, e)
	}
	return evs
}

var randomIDs = regexp.MustCompile(`"cmpl-[A-Z2-7]{26}"`)

func normalizeIDs(s string) string { return randomIDs.ReplaceAllString(s, `"cmpl-*"`) }

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
