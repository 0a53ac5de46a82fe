package responsestest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/suite"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

// path is the route that TestBackend posts to.
const path = "/v1/responses"

// TestBackend checks that b keeps the contract of responses.Backend, and
// of responses.StreamingBackend when it is one, for requests of model
// (its catalogue entry: the suite serves a catalogue of that one model).
// It sends b's replies through responses.NewHandler, so the handler's own
// checks apply (a failure shows the handler's log, where a backend's
// error goes), and checks what the client would get:
//
//   - a response is completed or incomplete, with at least one output
//     item, each a message with text, a function call with a call id and
//     a name, or a reasoning item;
//   - a stream numbers its events 0, 1, 2…, names each in its event:
//     line as in its type, begins with response.created and
//     response.in_progress, adds and finishes the items one at a time in
//     order, repeats in each *.done event the text or arguments of its
//     deltas, and ends with response.completed or response.incomplete
//     (whose response holds the items streamed), then [DONE];
//   - usage counts are not negative, and the total is their sum;
//   - Complete and Stream leave the params as they found them, return
//     once their context is cancelled, and Stream stops as soon as its
//     consumer does;
//   - b is safe for concurrent use (run the suite with -race).
//
// A backend may refuse what it cannot do (tools, say) with a client
// error (an *apierrors.Error with a 4xx status): the check is then logged
// and skipped. Every subtest runs in parallel with the others.
func TestBackend(t *testing.T, b responses.Backend, model models.Model) {
	t.Helper()
	handler := func(log *suite.Log) http.Handler {
		return responses.NewHandler(models.NewMemoryCatalog(model), b, endpoint.WithLogger(log.Logger()))
	}
	body := func(members string) string { return suite.Body(model.ID, members) }
	tests := []struct{ name, members string }{
		{"AnInput", `"input":"Say hello."`},
		{"WithInstructions", `"instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Count to three."}]}]`},
		{"ANamedToolCall", toolRequest},
		{"UpToTheTokenCap", `"max_output_tokens":16,"input":"Count to ten."`},
	}
	for _, tc := range tests {
		t.Run("Answers"+tc.name, func(t *testing.T) {
			t.Parallel()
			res, log, ok := suite.Complete[responses.Response](t, handler, path, body(tc.members))
			if ok {
				suite.Check(t, log, checkResponse(res))
			}
		})
		t.Run("Streams"+tc.name, func(t *testing.T) {
			t.Parallel()
			log := &suite.Log{}
			rep := suite.Post(handler(log), path, body(`"stream":true,`+tc.members))
			if suite.Answered(t, log, rep) {
				suite.Check(t, log, checkStream(suite.Events(t, rep.Body)))
			}
		})
	}
	suite.RunShared(t, suite.NewBackend[responses.Request, responses.Params, *responses.Result, responses.Delta](b, model, handler, path,
		func(r *responses.Request, m *models.Model) *responses.Params {
			return &responses.Params{Request: r, Model: m}
		},
		func(p *responses.Params) any { return p }),
		`"max_output_tokens":50,`+toolRequest)
}

// toolRequest is the members of a request that names a tool to call.
const toolRequest = `"tools":[{"type":"function","name":"get_weather","description":"The weather in a city.",` +
	`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],` +
	`"tool_choice":{"type":"function","name":"get_weather"},"input":"What is the weather in Paris?"`

// checkResponse checks a finished response.
func checkResponse(res *responses.Response) error {
	switch {
	case res.Status != responses.StatusCompleted && res.Status != responses.StatusIncomplete:
		return fmt.Errorf("the response is %q, want completed or incomplete", res.Status)
	case len(res.Output) == 0:
		return fmt.Errorf("the response has no output item")
	case res.Usage == nil:
		return fmt.Errorf("the response has no usage")
	case res.Usage.InputTokens < 0 || res.Usage.OutputTokens < 0 || res.Usage.TotalTokens != res.Usage.InputTokens+res.Usage.OutputTokens:
		return fmt.Errorf("usage %+v: negative, or total_tokens is not input_tokens + output_tokens", *res.Usage)
	}
	for i, it := range res.Output {
		switch it.Type {
		case "message":
			if it.Role != "assistant" || it.Text() == "" {
				return fmt.Errorf("output item %d is a message without role assistant or text", i)
			}
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return fmt.Errorf("output item %d is a function call without call_id or name", i)
			}
		case "reasoning":
		default:
			return fmt.Errorf("output item %d has type %q", i, it.Type)
		}
		if it.ID == "" {
			return fmt.Errorf("output item %d has no id", i)
		}
	}
	return nil
}

// streamEvent is the members of a stream event that checkStream reads.
type streamEvent struct {
	Type           string                `json:"type"`
	SequenceNumber *int                  `json:"sequence_number"`
	OutputIndex    *int                  `json:"output_index"`
	Item           *responses.OutputItem `json:"item"`
	Delta          string                `json:"delta"`
	Text           *string               `json:"text"`
	Arguments      *string               `json:"arguments"`
	Response       *responses.Response   `json:"response"`
}

// checkStream checks the events of a stream (as parsed, [DONE]
// included).
func checkStream(events []suite.Event) error {
	if len(events) < 4 || events[len(events)-1].Data != "[DONE]" {
		return fmt.Errorf("the stream has %d events and does not end with data: [DONE]", len(events))
	}
	var (
		added    []responses.OutputItem // the items added, in order
		open     = -1                   // index of the open item, -1 when none
		text     strings.Builder        // the deltas of the open item's text or arguments
		terminal *responses.Response
	)
	for k, e := range events[:len(events)-1] {
		var ev streamEvent
		if err := json.Unmarshal([]byte(e.Data), &ev); err != nil {
			return fmt.Errorf("event %d does not decode: %v: %s", k, err, e.Data)
		}
		switch {
		case e.Name != ev.Type:
			return fmt.Errorf("event %d is named %q but has type %q", k, e.Name, ev.Type)
		case ev.SequenceNumber == nil:
			return fmt.Errorf("event %d (%s) has no sequence_number", k, ev.Type)
		case *ev.SequenceNumber != k:
			return fmt.Errorf("event %d (%s) has sequence_number %d, want %d", k, ev.Type, *ev.SequenceNumber, k)
		case terminal != nil:
			return fmt.Errorf("event %d (%s) follows the terminal event", k, ev.Type)
		case k == 0 && ev.Type != responses.EventCreated, k == 1 && ev.Type != responses.EventInProgress:
			return fmt.Errorf("event %d is %s: a stream begins with %s, %s", k, ev.Type, responses.EventCreated, responses.EventInProgress)
		}
		if ev.OutputIndex != nil && open >= 0 && *ev.OutputIndex != open && ev.Type != responses.EventOutputItemAdded {
			return fmt.Errorf("event %d (%s) is for output item %d while item %d is open", k, ev.Type, *ev.OutputIndex, open)
		}
		switch ev.Type {
		case responses.EventOutputItemAdded:
			switch {
			case open >= 0:
				return fmt.Errorf("event %d adds an item while item %d is open", k, open)
			case ev.OutputIndex == nil || *ev.OutputIndex != len(added) || ev.Item == nil:
				return fmt.Errorf("event %d adds item %v with no item, want index %d", k, ev.OutputIndex, len(added))
			}
			open = len(added)
			added = append(added, *ev.Item)
			text.Reset()
		case responses.EventOutputTextDelta, responses.EventFunctionArgumentsDelta, responses.EventReasoningTextDelta:
			if open < 0 {
				return fmt.Errorf("event %d (%s) with no open item", k, ev.Type)
			}
			text.WriteString(ev.Delta)
		case responses.EventOutputTextDone, responses.EventReasoningTextDone:
			if ev.Text == nil || *ev.Text != text.String() {
				return fmt.Errorf("event %d (%s) has text %q, but its deltas make %q", k, ev.Type, deref(ev.Text), text.String())
			}
		case responses.EventFunctionArgumentsDone:
			if ev.Arguments == nil || *ev.Arguments != text.String() {
				return fmt.Errorf("event %d (%s) has arguments %q, but its deltas make %q", k, ev.Type, deref(ev.Arguments), text.String())
			}
		case responses.EventOutputItemDone:
			if open < 0 || ev.Item == nil || ev.Item.ID != added[open].ID {
				return fmt.Errorf("event %d finishes an item that was not the open one", k)
			}
			added[open] = *ev.Item
			open = -1
		case responses.EventCompleted, responses.EventIncomplete:
			terminal = ev.Response
			if terminal == nil {
				return fmt.Errorf("event %d (%s) carries no response", k, ev.Type)
			}
		case responses.EventFailed:
			return fmt.Errorf("the stream failed: %s", e.Data)
		}
	}
	switch {
	case terminal == nil:
		return fmt.Errorf("the stream ends without %s or %s", responses.EventCompleted, responses.EventIncomplete)
	case open >= 0:
		return fmt.Errorf("the stream ends with item %d open", open)
	case len(terminal.Output) != len(added):
		return fmt.Errorf("the final response has %d output items, the stream added %d", len(terminal.Output), len(added))
	}
	for i := range added {
		if terminal.Output[i].ID != added[i].ID {
			return fmt.Errorf("output item %d of the final response is %s, the stream's is %s", i, terminal.Output[i].ID, added[i].ID)
		}
	}
	return checkResponse(terminal)
}

func deref(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
