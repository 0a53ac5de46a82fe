package responses_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

// Models of the test catalogue besides the demo's: one that lacks the
// compat-response endpoint type.
const chatOnlyModel = "demo-chat-only"

func testCatalog() *models.MemoryCatalog {
	return endpointtest.Catalog(models.Model{ID: chatOnlyModel, EndpointTypes: []models.EndpointType{models.Compat}})
}

// newTestHandler is the handler the tests drive: the demo backend (eight
// tokens per chunk, to keep streams short), the test catalogue and the
// fixed clock.
func newTestHandler(opts ...responses.Option) http.Handler {
	return newHandlerWith(demo.NewTextBackend(demo.WithTokensPerChunk(8)).Responses(), opts...)
}

func newHandlerWith(b responses.Backend, opts ...responses.Option) http.Handler {
	return endpointtest.NewHandler(responses.NewHandler, testCatalog(), b, opts...)
}

// do sends a request to h, with the JSON content type when body is not
// empty, and returns the recorded response.
var do = endpointtest.Do

// post sends body to POST /v1/responses.
func post(t testing.TB, h http.Handler, body string, mods ...func(*http.Request)) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, h, http.MethodPost, "/v1/responses", body, mods...)
}

// errorBody is the general error body with the given fields; an empty
// param is null.
var errorBody = endpointtest.ErrorBody

// decode decodes a JSON body into a map.
func decode(t testing.TB, body string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v
}

// event is one event of a recorded stream: its name and its data,
// decoded.
type event struct {
	Name string
	JSON map[string]any
}

// readEvents parses a recorded stream, which must end with data: [DONE]
// after its terminal event (spec §6), and returns its events but [DONE].
func readEvents(t testing.TB, body string) []event {
	t.Helper()
	var evs []event
	done := false
	for ev, err := range sse.Read(strings.NewReader(body)) {
		require.NoError(t, err)
		require.False(t, done, "an event after data: [DONE]")
		if ev.IsDone() {
			require.Empty(t, ev.Type, "[DONE] has no event name")
			done = true
			continue
		}
		e := event{Name: ev.Type}
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &e.JSON), "event %q", ev.Data)
		evs = append(evs, e)
	}
	require.True(t, done, "the stream does not end with data: [DONE]")
	return evs
}

// streamText is the text of a stream's output_text deltas, concatenated.
func streamText(evs []event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Name == responses.EventOutputTextDelta {
			b.WriteString(ev.JSON["delta"].(string))
		}
	}
	return b.String()
}

// outputText is the text of the message items of a decoded response.
func outputText(resp map[string]any) string {
	var b strings.Builder
	for _, x := range resp["output"].([]any) {
		it := x.(map[string]any)
		if it["type"] != "message" {
			continue
		}
		for _, c := range it["content"].([]any) {
			b.WriteString(c.(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

// checkStream checks the rules of docs/design.md on a responses stream: each
// event's name is the type in its data; sequence numbers count from 0;
// created then in_progress first, then, per output item in order,
// output_item.added, (for a message) content_part.added, its deltas,
// output_text.done with the deltas' text, content_part.done, (for a
// reasoning item) the same with reasoning_summary events, (for a
// function call) arguments deltas and arguments.done with their
// concatenation, then output_item.done with the whole item; and exactly
// one terminal event at the end (completed, incomplete or failed) whose
// response carries the usage (a failed one may have none) and, but for
// failed, the finished items. No
// event has a top-level "error" member. It returns the terminal response.
func checkStream(t testing.TB, evs []event) map[string]any {
	t.Helper()
	require.GreaterOrEqual(t, len(evs), 3, "created, in_progress and a terminal event at least")
	for i, ev := range evs {
		require.Equal(t, ev.Name, ev.JSON["type"], "event %d: the event name is the type", i)
		require.Equal(t, float64(i), ev.JSON["sequence_number"], "event %d", i)
		require.NotContains(t, ev.JSON, "error", "event %d", i)
	}
	require.Equal(t, responses.EventCreated, evs[0].Name)
	require.Equal(t, responses.EventInProgress, evs[1].Name)
	id := evs[0].JSON["response"].(map[string]any)["id"].(string)
	require.True(t, strings.HasPrefix(id, responses.IDPrefix), id)
	for _, ev := range evs[:2] {
		resp := ev.JSON["response"].(map[string]any)
		require.Equal(t, "in_progress", resp["status"])
		require.Nil(t, resp["usage"])
		require.Empty(t, resp["output"])
	}
	last := evs[len(evs)-1]
	terminal := last.JSON["response"].(map[string]any)
	require.Equal(t, id, terminal["id"], "one response id")
	switch last.Name {
	case responses.EventCompleted:
		require.Equal(t, "completed", terminal["status"])
	case responses.EventIncomplete:
		require.Equal(t, "incomplete", terminal["status"])
		require.NotEmpty(t, terminal["incomplete_details"].(map[string]any)["reason"])
	case responses.EventFailed:
		require.Equal(t, "failed", terminal["status"])
		require.NotEmpty(t, terminal["error"].(map[string]any)["message"])
	default:
		t.Fatalf("the last event is %s, not a terminal one", last.Name)
	}
	if u, ok := terminal["usage"].(map[string]any); ok || last.Name != responses.EventFailed {
		require.True(t, ok, "the terminal response carries the usage")
		require.Equal(t, u["input_tokens"].(float64)+u["output_tokens"].(float64), u["total_tokens"])
	}

	var done []any // the items of output_item.done
	item := -1
	var itemID, kind string
	var text strings.Builder
	partOpen := false
	for i, ev := range evs[2 : len(evs)-1] {
		i += 2
		d := ev.JSON
		switch ev.Name {
		case responses.EventOutputItemAdded:
			require.Equal(t, float64(item+1), d["output_index"], "event %d: items in order", i)
			require.Empty(t, itemID, "event %d: the previous item is done", i)
			item++
			it := d["item"].(map[string]any)
			itemID, kind = it["id"].(string), it["type"].(string)
			require.Equal(t, "in_progress", it["status"])
			text.Reset()
		case responses.EventContentPartAdded, responses.EventReasoningPartAdded:
			if ev.Name == responses.EventContentPartAdded {
				require.Equal(t, "message", kind)
			} else {
				require.Equal(t, "reasoning", kind)
				require.Equal(t, float64(0), d["summary_index"])
			}
			require.False(t, partOpen)
			partOpen = true
		case responses.EventReasoningTextDelta:
			require.Equal(t, itemID, d["item_id"], "event %d", i)
			require.Equal(t, float64(item), d["output_index"], "event %d", i)
			require.True(t, partOpen, "event %d: reasoning in an open part", i)
			text.WriteString(d["delta"].(string))
		case responses.EventReasoningTextDone:
			require.Equal(t, text.String(), d["text"], "event %d", i)
		case responses.EventReasoningPartDone:
			require.Equal(t, text.String(), d["part"].(map[string]any)["text"], "event %d", i)
			partOpen = false
		case responses.EventOutputTextDelta, responses.EventFunctionArgumentsDelta:
			require.Equal(t, itemID, d["item_id"], "event %d", i)
			require.Equal(t, float64(item), d["output_index"], "event %d", i)
			if ev.Name == responses.EventOutputTextDelta {
				require.True(t, partOpen, "event %d: text in an open part", i)
			} else {
				require.Equal(t, "function_call", kind)
			}
			text.WriteString(d["delta"].(string))
		case responses.EventOutputTextDone:
			require.Equal(t, text.String(), d["text"], "event %d", i)
		case responses.EventContentPartDone:
			require.Equal(t, text.String(), d["part"].(map[string]any)["text"], "event %d", i)
			partOpen = false
		case responses.EventFunctionArgumentsDone:
			require.Equal(t, text.String(), d["arguments"], "event %d", i)
		case responses.EventOutputItemDone:
			require.Equal(t, float64(item), d["output_index"])
			it := d["item"].(map[string]any)
			require.Equal(t, itemID, it["id"])
			require.False(t, partOpen, "event %d: the part is done before the item", i)
			switch kind {
			case "message":
				require.Equal(t, text.String(), it["content"].([]any)[0].(map[string]any)["text"])
			case "reasoning":
				if text.Len() == 0 { // an item with only its encrypted content
					require.Empty(t, it["summary"], "event %d", i)
					require.NotEmpty(t, it["encrypted_content"], "event %d", i)
					break
				}
				require.Equal(t, text.String(), it["summary"].([]any)[0].(map[string]any)["text"])
			default:
				require.Equal(t, text.String(), it["arguments"])
			}
			done = append(done, it)
			itemID = ""
		default:
			t.Fatalf("event %d: unexpected %s", i, ev.Name)
		}
	}
	if last.Name != responses.EventFailed {
		require.Empty(t, itemID, "every item is done before the terminal event")
		require.Equal(t, len(done), len(terminal["output"].([]any)))
		if len(done) > 0 {
			require.Equal(t, done, terminal["output"], "the terminal response holds the done items")
		}
	}
	return terminal
}

// newDemo returns the demo backend, sending k tokens per chunk (8 if k
// is not given).
func newDemo(k ...int) *demo.ResponsesBackend {
	n := 8
	if len(k) > 0 {
		n = k[0]
	}
	return demo.NewTextBackend(demo.WithTokensPerChunk(n)).Responses()
}
