package relay_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// reasoningText is the gateway's summary of ModeReasoning's reasoning
// item: the upstream's parts, one blank line apart.
var reasoningText = strings.Join(relaytest.ReasoningSummary, "\n\n")

// TestResponsesRelaysReasoning: the upstream's reasoning item, with its
// summary, is the first output item of the reply, before the message,
// with the gateway's own id.
func TestResponsesRelaysReasoning(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-reasoning","input":"Hi","reasoning":{"effort":"low","summary":"auto"}}`)
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, 200, res.StatusCode, string(b))
	var v struct {
		Output []struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Summary []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"summary"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	require.Len(t, v.Output, 2, string(b))
	rs := v.Output[0]
	require.Equal(t, "reasoning", rs.Type)
	require.True(t, strings.HasPrefix(rs.ID, "rs_"))
	require.NotEqual(t, "rs_up", rs.ID)
	require.Len(t, rs.Summary, 1)
	require.Equal(t, "summary_text", rs.Summary[0].Type)
	require.Equal(t, reasoningText, rs.Summary[0].Text)
	require.Equal(t, "message", v.Output[1].Type)
	require.Equal(t, relaytest.Text(8), v.Output[1].Content[0].Text)
}

// TestResponsesStreamRelaysReasoning: the reasoning summary deltas of an
// upstream stream become the gateway's reasoning item, streamed before
// the message.
func TestResponsesStreamRelaysReasoning(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{relaytest.ModeReasoning, relaytest.ModeReasoningAtDone} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testResponsesStreamRelaysReasoning(t, mode)
		})
	}
}

func testResponsesStreamRelaysReasoning(t *testing.T, mode string) {
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-`+mode+`","input":"Hi","stream":true}`)
	require.Equal(t, 200, res.StatusCode)
	var types []string
	var summary strings.Builder
	var last map[string]any
	for ev, err := range sse.Read(res.Body) {
		require.NoError(t, err)
		if ev.IsDone() {
			continue // after the terminal event, checked below
		}
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &e))
		types = append(types, ev.Type)
		if ev.Type == "response.reasoning_summary_text.delta" {
			require.Equal(t, 0.0, e["output_index"])
			summary.WriteString(e["delta"].(string))
		}
		last = e
	}
	require.Equal(t, []string{"response.created", "response.in_progress", "response.output_item.added", "response.reasoning_summary_part.added",
		"response.reasoning_summary_text.delta"}, types[:5])
	require.Equal(t, reasoningText, summary.String())
	require.Equal(t, "response.completed", types[len(types)-1])
	out := last["response"].(map[string]any)["output"].([]any)
	require.Len(t, out, 2)
	require.Equal(t, "reasoning", out[0].(map[string]any)["type"])
	require.Equal(t, reasoningText, out[0].(map[string]any)["summary"].([]any)[0].(map[string]any)["text"])
	require.Equal(t, "message", out[1].(map[string]any)["type"])
}

// TestResponsesReplyThatIsNotAResponse: an upstream 200 whose body is a
// JSON list or an error object is a 502, never a completed response with
// no output, and the error object's text (which echoes the upstream's
// key) reaches neither the client nor the response.
func TestResponsesReplyThatIsNotAResponse(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	for _, mode := range []string{relaytest.ModeNotAResponse, relaytest.ModeErrorObject} {
		for _, stream := range []string{"", `,"stream":true`} {
			res := g.post(t, "/v1/responses", `{"model":"pub-`+mode+`","input":"Hi"`+stream+`}`)
			b, _ := io.ReadAll(res.Body)
			require.Equal(t, 502, res.StatusCode, "%s%s: %s", mode, stream, b)
			e := errorOf(t, string(b))
			require.Equal(t, "bad_gateway", e["code"])
			require.NotContains(t, string(b), upstreamKey)
			require.NotContains(t, string(b), relaytest.LeakHost)
		}
	}
	require.Zero(t, g.charged(t))
}
