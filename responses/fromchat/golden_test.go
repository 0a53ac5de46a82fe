package fromchat_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// normalizeIDs replaces the random ids of responses, items and calls in
// raw reply text with "<prefix>*".
var normalizeIDs = golden.NormalizeIDs("resp_", "msg_", "fc_", "rs_", "call_")

// TestGolden posts every testdata/<case>.request.json to POST
// /v1/responses of the responses handler over the adapter over the demo's
// chat backend (eight tokens a chunk, fixed clock), and compares the chat
// request that the demo was asked with <case>.chat.json, and the reply
// with <case>.response.json, or the stream with <case>.stream.txt, after
// normalizing the random ids. Regenerate with go test ./responses/fromchat
// -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	golden.Run(t, func(t *testing.T, name string, body []byte) {
		var req struct{ Stream bool }
		require.NoError(t, json.Unmarshal(body, &req))
		rec := &recorder{b: demoChat()}
		w := post(t, newHandler(over(rec)), string(body))
		require.Equal(t, 200, w.Code, w.Body.String())
		asked, err := json.Marshal(rec.last(t))
		require.NoError(t, err)
		golden.JSON(t, golden.Path(name, ".chat.json"), asked)
		golden.Reply(t, name, normalizeIDs(w.Body.String()), req.Stream, func(s string) any { return readEvents(t, s) })
	})
}
