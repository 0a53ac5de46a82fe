package fromchat_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/internal/golden"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
)

// FuzzChatParams translates arbitrary requests, with arbitrary stored
// conversations, unvalidated: nothing panics, and each either translates
// into a chat request of at least one message that encodes, or is a 400
// invalid_request_error naming a param. The same body posted to the
// responses handler over the adapter over the demo's chat backend is
// answered with a JSON reply, a JSON client error or a well-formed
// stream, never a server error of the translation's making (a 502 is the
// demo's [demo:fail] directive).
func FuzzChatParams(f *testing.F) {
	for _, req := range golden.Requests(f) {
		f.Add(string(req.Body), "")
	}
	f.Add(`{"model":"demo-chat","input":[{"type":"item_reference","id":"x"}],"tools":[{"type":"web_search"}]}`, "")
	f.Add(`{"model":"demo-chat","input":[{"role":"user","content":[{"type":"input_image","file_id":"f"}]}]}`, "")
	f.Add(`{"model":"demo-chat","tool_choice":{"type":"allowed_tools"},"tools":[{"type":"function","name":"f"}],"input":"x"}`, "")
	f.Add(`{"model":"demo-chat","input":[{"type":"reasoning"}]}`, `[{"type":"function_call_output","call_id":"c"}]`)
	f.Add(`{"model":"demo-chat","input":[{"type":"function_call"},{"role":"assistant","content":null}]}`, `[{"type":"web_search_call"},{"role":"user"}]`)
	h := newHandler(over(demoChat()))
	f.Fuzz(func(t *testing.T, body, history string) {
		var req responses.Request
		if json.Unmarshal([]byte(body), &req) == nil {
			p := &responses.Params{Request: &req, Model: &models.Model{ID: "m"}}
			_ = json.Unmarshal([]byte(history), &p.History)
			cp, err := fromchat.ChatParams(p)
			if err != nil {
				var e *apierrors.Error
				require.True(t, errors.As(err, &e), "%v", err)
				require.Equal(t, 400, e.Status, "%v", err)
				require.NotEmpty(t, e.Param, "%v", err)
			} else {
				require.NotEmpty(t, cp.Request.Messages)
				_, err := json.Marshal(cp.Request)
				require.NoError(t, err)
			}
		}

		w := post(t, h, body)
		endpointtest.CheckAnswer(t, w, func(s string) { checkTerminal(t, s) }, 200, 400, 404, 502)
	})
}

// checkTerminal checks that a stream ends with [DONE] after its terminal
// event: response.completed or response.incomplete, or response.failed
// with the demo's bad_gateway.
func checkTerminal(t *testing.T, body string) {
	t.Helper()
	evs := readEvents(t, body)
	require.GreaterOrEqual(t, len(evs), 2, body)
	require.Equal(t, "[DONE]", evs[len(evs)-1].Data, body)
	switch last := evs[len(evs)-2]; last.Name {
	case responses.EventCompleted, responses.EventIncomplete:
	case responses.EventFailed:
		require.True(t, strings.Contains(body, `"code":"bad_gateway"`), body)
	default:
		t.Fatalf("the stream ends with %s: %s", last.Name, body)
	}
}
