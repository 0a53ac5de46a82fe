package chat_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/sse"
)

// Models of the test catalogue besides the demo's: one that lacks the
// compat endpoint type.
const videoModel = "demo-video"

func testCatalog() *models.MemoryCatalog {
	return endpointtest.Catalog(models.Model{ID: videoModel, EndpointTypes: []models.EndpointType{models.CompatVideo}})
}

// newTestHandler is the handler the tests drive: the demo backend (eight
// tokens per chunk, to keep streams short), the test catalogue and the
// fixed clock.
func newTestHandler(opts ...chat.Option) http.Handler {
	return newHandlerWith(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Chat(), opts...)
}

func newHandlerWith(b chat.Backend, opts ...chat.Option) http.Handler {
	return endpointtest.NewHandler(chat.NewHandler, testCatalog(), b, opts...)
}

// post sends body to POST /v1/chat/completions on h.
func post(t testing.TB, h http.Handler, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	return endpointtest.Post(t, h, "/v1/chat/completions", body, mods...)
}

// errorBody is the general error body with the given fields; an empty
// param is null.
var errorBody = endpointtest.ErrorBody

// event is one event of a recorded stream.
type event = endpointtest.Event

// readEvents parses a recorded stream.
var readEvents = endpointtest.ReadEvents

// normalize replaces the random parts of a decoded reply (ids of
// completions and tool calls) with fixed text, in place.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "id" {
				for _, prefix := range []string{chat.IDPrefix, "call_"} {
					if strings.HasPrefix(s, prefix) {
						v[k] = prefix + "*"
					}
				}
				continue
			}
			v[k] = normalize(x)
		}
	case []any:
		for i := range v {
			v[i] = normalize(v[i])
		}
	}
	return v
}

// checkStream checks the rules of spec §2.2 and docs/design.md on a chat
// stream: one id, the object name, role in the first chunk of each choice
// only, finish_reason null except in each choice's last chunk, whose
// delta is empty (the SDKs' accumulators rely on it), no usage
// except in a final chunk with no choices (and only when asked), no
// "error" key in normal chunks, contiguous tool-call indexes starting
// with id, type and name, and [DONE] at the end — or, for a failed
// stream, one error event at the end and no [DONE].
func checkStream(t testing.TB, evs []event, choices int, includeUsage bool) {
	t.Helper()
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	failed := last.JSON != nil && last.JSON["error"] != nil
	if failed {
		require.Len(t, last.JSON, 1, "an error event holds the error only")
		evs = evs[:len(evs)-1]
	} else {
		require.Equal(t, sse.DoneData, last.Raw, "the stream ends with [DONE]")
		evs = evs[:len(evs)-1]
	}
	var id string
	started := make([]bool, choices)
	finished := make([]bool, choices)
	calls := make([]int, choices)
	sawUsage := false
	for i, ev := range evs {
		c := ev.JSON
		require.NotNil(t, c, "event %d is JSON", i)
		require.NotContains(t, c, "error", "event %d", i)
		require.Equal(t, chat.ObjectChunk, c["object"])
		require.NotNil(t, c["model"])
		require.NotNil(t, c["created"])
		if id == "" {
			id = c["id"].(string)
			require.True(t, strings.HasPrefix(id, chat.IDPrefix), id)
		}
		require.Equal(t, id, c["id"], "one id across chunks")
		require.False(t, sawUsage, "the usage chunk is the last one")
		cs := c["choices"].([]any)
		if u, ok := c["usage"]; ok {
			require.True(t, includeUsage, "usage only when asked")
			require.Empty(t, cs, "the usage chunk has no choices")
			um := u.(map[string]any)
			require.Equal(t, um["prompt_tokens"].(float64)+um["completion_tokens"].(float64), um["total_tokens"])
			sawUsage = true
			continue
		}
		require.Len(t, cs, 1, "one choice per chunk")
		ch := cs[0].(map[string]any)
		k := int(ch["index"].(float64))
		require.False(t, finished[k], "no chunk after a choice's finish reason")
		delta := ch["delta"].(map[string]any)
		if !started[k] {
			require.Equal(t, "assistant", delta["role"], "role in the first chunk of choice %d", k)
			started[k] = true
		} else {
			require.NotContains(t, delta, "role", "role only in the first chunk")
		}
		require.Contains(t, ch, "finish_reason")
		if ch["finish_reason"] != nil {
			require.Empty(t, delta, "the finish reason comes in a chunk of its own")
			finished[k] = true
		}
		if tcs, ok := delta["tool_calls"].([]any); ok {
			for _, x := range tcs {
				tc := x.(map[string]any)
				j := int(tc["index"].(float64))
				require.LessOrEqual(t, j, calls[k], "tool call indexes are contiguous")
				if j == calls[k] {
					require.NotEmpty(t, tc["id"])
					require.Equal(t, "function", tc["type"])
					require.NotEmpty(t, tc["function"].(map[string]any)["name"])
					calls[k]++
				} else {
					require.NotContains(t, tc, "id")
				}
			}
		}
	}
	if failed {
		return
	}
	require.Equal(t, includeUsage, sawUsage, "usage chunk iff include_usage")
	for k := range choices {
		require.True(t, started[k] && finished[k], "choice %d started and finished", k)
	}
}
