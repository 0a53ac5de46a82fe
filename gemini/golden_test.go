package gemini_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/models"
)

// normalizeIDs replaces the random ids of replies and function calls in
// raw reply text with "<prefix>*".
var normalizeIDs = golden.NormalizeIDs(`responseId":"`, "call_")

// newTestHandler is the handler over the demo, eight tokens a chunk,
// mounted on its pattern.
func newTestHandler(opts ...gemini.Option) http.Handler {
	mux := http.NewServeMux()
	gemini.Register(mux, gemini.NewHandler(models.NewMemoryCatalog(append(demo.TextModels(),
		models.Model{ID: "responses-only", EndpointTypes: []models.EndpointType{models.CompatResponse}})...),
		demo.NewTextBackend(demo.WithTokensPerChunk(8)).Chat(), opts...))
	return mux
}

// post sends body to path.
func post(t *testing.T, h http.Handler, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk) as generateContent,
// streamGenerateContent?alt=sse and streamGenerateContent, and compares
// the replies with <case>.response.json, <case>.sse.txt and
// <case>.array.json after normalizing the random ids; each stream is also
// checked against the rules the official clients rely on (checkSSE,
// checkEvents). Regenerate with go test ./gemini -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	for _, c := range golden.Requests(t) {
		name, body := c.Name, c.Body
		model := "demo-chat"
		if name == "thoughts" {
			model = "demo-reasoner"
		}
		var req gemini.Request
		require.NoError(t, json.Unmarshal(body, &req))
		n := 1
		if gc := req.GenerationConfig; gc != nil && gc.CandidateCount != nil {
			n = *gc.CandidateCount
		}
		t.Run(name+"/generateContent", func(t *testing.T) {
			t.Parallel()
			w := post(t, h, "/v1beta/models/"+model+":generateContent", string(body))
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, "application/json", w.Header().Get("Content-Type"))
			golden.JSON(t, golden.Path(name, ".response.json"), []byte(normalizeIDs(w.Body.String())))
		})
		t.Run(name+"/sse", func(t *testing.T) {
			t.Parallel()
			w := post(t, h, "/v1beta/models/"+model+":streamGenerateContent?alt=sse", string(body))
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
			got := normalizeIDs(w.Body.String())
			checkEvents(t, checkSSE(t, got), n)
			golden.Compare(t, golden.Path(name, ".sse.txt"), got, func(s string) any { return checkSSE(t, s) })
		})
		t.Run(name+"/array", func(t *testing.T) {
			t.Parallel()
			w := post(t, h, "/v1beta/models/"+model+":streamGenerateContent", string(body))
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, "application/json; charset=utf-8", w.Header().Get("Content-Type"))
			got := normalizeIDs(w.Body.String())
			var events []gemini.Response
			require.NoError(t, json.Unmarshal([]byte(got), &events), got)
			checkEvents(t, events, n)
			golden.Compare(t, golden.Path(name, ".array.json"), got, golden.DecodeJSON(t))
		})
	}
}

// checkSSE checks the framing that Google's Go client reads (it splits
// the body at blank lines and takes each block for one "data:" line,
// anything else for an invalid chunk): every block is exactly one
// "data: <json>" line, the body ends with a blank line, and each event is
// a Response. It returns the events.
func checkSSE(t *testing.T, body string) []gemini.Response {
	t.Helper()
	require.True(t, strings.HasSuffix(body, "\n\n"), "a blank line after the last event")
	var out []gemini.Response
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		require.NotContains(t, block, "\n", "one line per event: %q", block)
		data, ok := strings.CutPrefix(block, "data: ")
		require.True(t, ok, "a data: line: %q", block)
		var raw map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(data), &raw), data)
		var r gemini.Response
		require.NoError(t, json.Unmarshal([]byte(data), &r))
		out = append(out, r)
	}
	return out
}

// checkEvents checks the events of a stream of n candidates: each
// candidate ends exactly once, with its finishReason, and nothing of it
// comes after; the last event carries the usageMetadata, whose total is
// the sum of its parts; every event names the model and the response, the
// same in all; no event carries snake_case members or a
// continuationToken.
func checkEvents(t *testing.T, events []gemini.Response, n int) {
	t.Helper()
	require.NotEmpty(t, events)
	ended := make([]bool, n)
	id := events[0].ResponseID
	require.NotEmpty(t, id)
	for i, ev := range events {
		require.Equal(t, id, ev.ResponseID)
		require.NotEmpty(t, ev.ModelVersion)
		if i < len(events)-1 {
			require.Nil(t, ev.UsageMetadata, "usage on the last event only")
		}
		for _, c := range ev.Candidates {
			require.Less(t, c.Index, n)
			require.False(t, ended[c.Index], "candidate %d after its finishReason", c.Index)
			ended[c.Index] = c.FinishReason != ""
		}
	}
	for i, e := range ended {
		require.True(t, e, "candidate %d has a finishReason", i)
	}
	u := events[len(events)-1].UsageMetadata
	require.NotNil(t, u)
	require.Equal(t, u.PromptTokenCount+u.CandidatesTokenCount+u.ThoughtsTokenCount, u.TotalTokenCount)
	b, _ := json.Marshal(events)
	require.NotContains(t, string(b), "continuationToken")
	require.NotRegexp(t, `"[a-z]+_[a-z_]+":`, string(b), "camelCase only")
}
