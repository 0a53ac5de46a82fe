package conversations_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/sse"
)

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

// terminal returns the response of the terminal event of a recorded
// stream, and its event name.
func terminal(t testing.TB, body string) (string, map[string]any) {
	t.Helper()
	var name string
	var resp map[string]any
	for ev, err := range sse.Read(strings.NewReader(body)) {
		require.NoError(t, err)
		if ev.IsDone() {
			continue
		}
		name = ev.Type
		var data map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &data))
		resp, _ = data["response"].(map[string]any)
	}
	return name, resp
}

// TestConversationContinuedOverTwoResponses: the second response of a
// conversation sees the first's input and output as history, and the
// conversation's items are the four items of the two turns, in order,
// with the ids the responses gave them. The conversation is named as a
// string, then as {"id": …}, and the second turn streams.
func TestConversationContinuedOverTwoResponses(t *testing.T) {
	t.Parallel()
	store := conversations.NewMemoryStore(nil)
	rec := &recorder{StreamingBackend: demo.NewTextBackend().Responses()}
	mux := http.NewServeMux()
	conversations.Register(mux, conversations.NewHandler(store))
	responses.Register(mux, responses.NewHandler(endpointtest.Catalog(), rec, responses.WithConversations(store)))
	g := &gateway{h: mux, store: store}
	id := g.create(t, `{}`)

	first := ok(t, g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"My name is Ada.","conversation":"`+id+`"}`))
	require.Equal(t, map[string]any{"id": id}, first["conversation"])
	require.NotContains(t, outputText(first), "Earlier", "the conversation was empty")

	w := g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"What is my name?","stream":true,"conversation":{"id":"`+id+`"}}`)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	event, second := terminal(t, w.Body.String())
	require.Equal(t, responses.EventCompleted, event)
	require.Equal(t, map[string]any{"id": id}, second["conversation"])
	require.True(t, strings.HasPrefix(outputText(second), `Earlier you said: "My name is Ada." (1 earlier message). `), outputText(second))

	// The backend was handed the first turn, its input and its output, as
	// the history of the second.
	history := rec.histories()
	require.Len(t, history, 2)
	require.Empty(t, history[0])
	require.Len(t, history[1], 2)
	require.Equal(t, "My name is Ada.", history[1][0].Content.String())
	require.Equal(t, responses.RoleUser, history[1][0].Role)
	require.Equal(t, outputText(first), history[1][1].Content.String())
	require.Equal(t, responses.RoleAssistant, history[1][1].Role)

	items := g.items(t, id)
	require.Len(t, items, 4)
	want := []struct{ role, text, id string }{
		{"user", "My name is Ada.", ""},
		{"assistant", outputText(first), first["output"].([]any)[0].(map[string]any)["id"].(string)},
		{"user", "What is my name?", ""},
		{"assistant", outputText(second), second["output"].([]any)[0].(map[string]any)["id"].(string)},
	}
	for i, it := range items {
		require.Equal(t, "message", it["type"], "item %d", i)
		require.Equal(t, want[i].role, it["role"], "item %d", i)
		require.Equal(t, want[i].text, it["content"].([]any)[0].(map[string]any)["text"], "item %d", i)
		require.True(t, strings.HasPrefix(it["id"].(string), "msg_"), "item %d: %v", i, it["id"])
		if want[i].id != "" {
			require.Equal(t, want[i].id, it["id"], "item %d: the output item keeps its id", i)
		}
	}
	// The input items of the stored responses are the conversation's.
	input := ok(t, g.do(t, http.MethodGet, "/v1/responses/"+first["id"].(string)+"/input_items", ""))
	require.Equal(t, items[0]["id"], input["first_id"])
}

// recorder is a backend that records the History of each request.
type recorder struct {
	responses.StreamingBackend
	mu   sync.Mutex
	seen [][]responses.Item
}

func (r *recorder) record(p *responses.Params) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, slices.Clone(p.History))
}

func (r *recorder) histories() [][]responses.Item {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func (r *recorder) Complete(ctx context.Context, p *responses.Params) (*responses.Result, error) {
	r.record(p)
	return r.StreamingBackend.Complete(ctx, p)
}

func (r *recorder) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	r.record(p)
	return r.StreamingBackend.Stream(ctx, p)
}

// TestConversationItemsAreHistory: the items a conversation was created
// with, and those added later, come before the input of a response.
func TestConversationItemsAreHistory(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	id := g.create(t, `{"items":[{"role":"user","content":"I live in Paris."}]}`)
	ok(t, g.do(t, http.MethodPost, "/v1/conversations/"+id+"/items", `{"items":[{"role":"user","content":"My name is Ada."}]}`))
	resp := ok(t, g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"Who am I?","conversation":"`+id+`"}`))
	require.True(t, strings.HasPrefix(outputText(resp), `Earlier you said: "My name is Ada." (2 earlier messages). `), outputText(resp))
	require.Len(t, g.items(t, id), 4)
}

// TestStoreFalseLeavesTheConversation: a response with "store": false
// sees the conversation's items, but adds nothing to it.
func TestStoreFalseLeavesTheConversation(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	id := g.create(t, `{"items":[{"role":"user","content":"My name is Ada."}]}`)
	resp := ok(t, g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"Who am I?","store":false,"conversation":"`+id+`"}`))
	require.True(t, strings.HasPrefix(outputText(resp), `Earlier you said: "My name is Ada."`), outputText(resp))
	require.Equal(t, map[string]any{"id": id}, resp["conversation"])
	require.Len(t, g.items(t, id), 1)
}

// TestResponseConversationErrors checks the errors of the conversation
// member of POST /v1/responses, and that none of them adds an item.
func TestResponseConversationErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	id := g.create(t, `{"items":[{"id":"msg_held","role":"user","content":"hello"}]}`)
	bob := ok(t, g.do(t, http.MethodPost, "/v1/conversations", `{}`, as("key_bob", "bob")))["id"].(string)
	cases := []struct {
		name, body           string
		status               int
		message, param, code string
	}{
		{"with previous_response_id", `{"model":"demo-chat","input":"hi","conversation":"` + id + `","previous_response_id":"resp_1"}`, 400,
			"Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.", "", "invalid_request_error"},
		{"unknown", `{"model":"demo-chat","input":"hi","conversation":"conv_missing"}`, 404,
			`Conversation with id "conv_missing" not found.`, "conversation", "not_found"},
		{"another owner's", `{"model":"demo-chat","input":"hi","conversation":{"id":"` + bob + `"}}`, 404,
			`Conversation with id "` + bob + `" not found.`, "conversation", "not_found"},
		{"empty id", `{"model":"demo-chat","input":"hi","conversation":""}`, 400,
			`conversation must name a conversation: its id, or {"id": …}`, "conversation", "invalid_request_error"},
		{"a number", `{"model":"demo-chat","input":"hi","conversation":42}`, 400,
			`conversation must be a conversation id or an object {"id": …}, got number`, "conversation", "invalid_request_error"},
		{"an id that is not a string", `{"model":"demo-chat","input":"hi","conversation":{"id":5}}`, 400,
			"conversation.id must be a string", "conversation.id", "invalid_request_error"},
		{"an object without id", `{"model":"demo-chat","input":"hi","conversation":{}}`, 400,
			"conversation.id must be a string", "conversation.id", "invalid_request_error"},
		{"an input item the conversation holds", `{"model":"demo-chat","conversation":"` + id + `","input":[{"role":"user","content":"a"},{"id":"msg_held","role":"user","content":"b"}]}`, 400,
			`Duplicate item found with id "msg_held". Remove duplicate items from your input and try again.`, "input[1].id", "invalid_request_error"},
		{"two input items sharing an id", `{"model":"demo-chat","conversation":"` + id + `","input":[{"id":"msg_x","role":"user","content":"a"},{"id":"msg_x","role":"user","content":"b"}]}`, 400,
			`Duplicate item found with id "msg_x". Remove duplicate items from your input and try again.`, "input[1].id", "invalid_request_error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := g.do(t, http.MethodPost, "/v1/responses", tc.body)
			endpointtest.RequireJSON(t, w, tc.status, errorBody(tc.message, "invalid_request_error", tc.param, tc.code))
		})
	}
	t.Cleanup(func() {
		require.Len(t, g.items(t, id), 1, "no error added an item")
		require.Empty(t, ok(t, g.do(t, http.MethodGet, "/v1/conversations/"+bob+"/items", "", as("key_bob", "bob")))["data"])
	})
}

// TestWithoutConversationsEveryConversationIsUnknown: a responses handler
// given no ConversationStore answers every conversation 404.
func TestWithoutConversationsEveryConversationIsUnknown(t *testing.T) {
	t.Parallel()
	h := responses.NewHandler(endpointtest.Catalog(), demo.NewTextBackend().Responses())
	w := endpointtest.Post(t, h, "/v1/responses", `{"model":"demo-chat","input":"hi","conversation":"conv_1"}`)
	endpointtest.RequireJSON(t, w, http.StatusNotFound, errorBody(`Conversation with id "conv_1" not found.`, "invalid_request_error", "conversation", "not_found"))
}

// appendFailing is a store whose AppendItems fails, as a database that
// went away after the conversation was read.
type appendFailing struct{ *conversations.MemoryStore }

func (appendFailing) AppendItems(context.Context, string, string, []responses.Item) error {
	return errors.New("connection reset by peer")
}

// TestUnappendedResponseIsNotReportedAsAdded: a response whose items
// the store fails to add to its conversation is answered 500 with
// X-Should-Retry: false (it was generated and charged), and a stream
// ends with response.failed carrying that error.
func TestUnappendedResponseIsNotReportedAsAdded(t *testing.T) {
	t.Parallel()
	store := appendFailing{conversations.NewMemoryStore(nil)}
	g := newGatewayWith(t, store)
	id := g.create(t, `{}`)
	msg := `The response was generated and charged, but it could not be added to conversation "` + id +
		`": the conversation does not hold it. Sending the request again generates and charges a new response.`

	w := g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"hi","conversation":"`+id+`"}`)
	endpointtest.RequireJSON(t, w, http.StatusInternalServerError, errorBody(msg, "server_error", "", "internal_server_error"))
	require.Equal(t, "false", w.Header().Get("X-Should-Retry"))

	w = g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"hi","stream":true,"conversation":"`+id+`"}`)
	require.Equal(t, http.StatusOK, w.Code)
	event, resp := terminal(t, w.Body.String())
	require.Equal(t, responses.EventFailed, event)
	require.Equal(t, map[string]any{"code": "internal_server_error", "message": msg}, resp["error"])
	require.NotEmpty(t, outputText(resp), "the output is sent")
}

// TestFailedStreamIsNotAdded: a stream that fails after it began is
// stored as failed, and its items are not added to the conversation.
func TestFailedStreamIsNotAdded(t *testing.T) {
	t.Parallel()
	store := conversations.NewMemoryStore(nil)
	fail := func(context.Context, *responses.Params) iter.Seq2[responses.Delta, error] {
		return func(yield func(responses.Delta, error) bool) {
			if yield(responses.Delta{Text: "Hello"}, nil) {
				yield(responses.Delta{}, apierrors.BadGateway("The upstream failed.", nil))
			}
		}
	}
	backend := endpointtest.FuncStreamingBackend[responses.Params, responses.Result, responses.Delta]{StreamFunc: fail}
	mux := http.NewServeMux()
	conversations.Register(mux, conversations.NewHandler(store))
	responses.Register(mux, responses.NewHandler(endpointtest.Catalog(), backend, endpoint.WithClock(endpointtest.FixedClock), responses.WithConversations(store)))
	g := &gateway{h: mux, store: store}
	id := g.create(t, `{}`)
	w := g.do(t, http.MethodPost, "/v1/responses", `{"model":"demo-chat","input":"hi","stream":true,"conversation":"`+id+`"}`)
	event, resp := terminal(t, w.Body.String())
	require.Equal(t, responses.EventFailed, event)
	require.Equal(t, "failed", resp["status"])
	require.Empty(t, g.items(t, id))
}
