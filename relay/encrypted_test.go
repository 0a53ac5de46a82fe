package relay_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// reasoningItem is a reasoning output item as a client reads it.
type reasoningItem struct {
	Type             string            `json:"type"`
	ID               string            `json:"id"`
	Summary          []json.RawMessage `json:"summary"`
	EncryptedContent *string           `json:"encrypted_content"`
}

// replyReasoning returns the reasoning items of a response object, and of
// its stream's response.output_item.done events.
func replyReasoning(t *testing.T, body []byte, stream bool) (output, done []reasoningItem) {
	t.Helper()
	var resp struct {
		Output []reasoningItem `json:"output"`
	}
	if !stream {
		require.NoError(t, json.Unmarshal(body, &resp), "%s", body)
		for _, it := range resp.Output {
			if it.Type == "reasoning" {
				output = append(output, it)
			}
		}
		return output, nil
	}
	for _, data := range events(t, bytes.NewReader(body)) {
		if data == "[DONE]" {
			continue
		}
		var ev struct {
			Type     string          `json:"type"`
			Item     reasoningItem   `json:"item"`
			Response json.RawMessage `json:"response"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
		switch ev.Type {
		case "response.output_item.done":
			if ev.Item.Type == "reasoning" {
				done = append(done, ev.Item)
			}
		case "response.completed":
			output, _ = replyReasoning(t, ev.Response, false)
		}
	}
	return output, done
}

// TestResponsesEncryptedReasoning: with include
// ["reasoning.encrypted_content"], the upstream is asked for it (include
// forwarded unchanged), and its reasoning items come back intact: their
// encrypted_content and their upstream id, streamed and not, with or
// without a summary (issue 26).
func TestResponsesEncryptedReasoning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, model string
		stream      bool
		summaries   int
	}{
		{"WithSummary", "pub-" + relaytest.ModeReasoning, false, 1},
		{"WithSummaryStream", "pub-" + relaytest.ModeReasoning, true, 1},
		{"SummaryAtDoneStream", "pub-" + relaytest.ModeReasoningAtDone, true, 1},
		{"WithoutSummary", "pub-" + relaytest.ModeOK, false, 0},
		{"WithoutSummaryStream", "pub-" + relaytest.ModeOK, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil)
			body := `{"model":"` + tc.model + `","input":"Hi","store":false,"include":["reasoning.encrypted_content"],"stream":` + jsonBool(tc.stream) + `}`
			res := g.post(t, "/v1/responses", body)
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, 200, res.StatusCode, "%s", b)

			var got struct {
				Include []string `json:"include"`
				Store   *bool    `json:"store"`
			}
			require.NoError(t, json.Unmarshal(g.up.Last().Body, &got))
			require.Equal(t, []string{"reasoning.encrypted_content"}, got.Include, "include reaches the upstream unchanged")

			output, done := replyReasoning(t, b, tc.stream)
			require.Len(t, output, 1, "%s", b)
			items := output
			if tc.stream {
				require.Len(t, done, 1, "%s", b)
				items = append(items, done...)
			}
			for _, it := range items {
				require.Equal(t, "rs_up", it.ID, "the upstream's id, which the encrypted content goes back with")
				require.NotNil(t, it.EncryptedContent)
				require.Equal(t, relaytest.EncryptedReasoning, *it.EncryptedContent)
				require.Len(t, it.Summary, tc.summaries)
				require.NotNil(t, it.Summary, "summary is an array, empty or not")
			}
		})
	}
}

// TestResponsesWithoutEncryptedReasoning: without the include, nothing
// changes: the gateway's ids, no encrypted content, and an upstream
// reasoning item without a summary is not relayed.
func TestResponsesWithoutEncryptedReasoning(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/responses", `{"model":"pub-`+relaytest.ModeReasoning+`","input":"Hi"}`)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	output, _ := replyReasoning(t, b, false)
	require.Len(t, output, 1)
	require.NotEqual(t, "rs_up", output[0].ID)
	require.Nil(t, output[0].EncryptedContent, "%s", b)

	res = g.post(t, "/v1/responses", `{"model":"pub-`+relaytest.ModeOK+`","input":"Hi"}`)
	b, err = io.ReadAll(res.Body)
	require.NoError(t, err)
	output, _ = replyReasoning(t, b, false)
	require.Empty(t, output, "%s", b)
}

// TestResponsesEncryptedReasoningGoesBack: a stateless client sends the
// reasoning item back in its next input, and the upstream gets it as the
// client sent it; a stored response's reasoning item is replayed with its
// encrypted content for previous_response_id (issue 26).
func TestResponsesEncryptedReasoningGoesBack(t *testing.T) {
	t.Parallel()
	upstreamInput := func(t *testing.T, g *gateway) []map[string]json.RawMessage {
		t.Helper()
		var got struct {
			Input []map[string]json.RawMessage `json:"input"`
		}
		require.NoError(t, json.Unmarshal(g.up.Last().Body, &got))
		return got.Input
	}
	reasoningOf := func(items []map[string]json.RawMessage) map[string]json.RawMessage {
		for _, it := range items {
			if string(it["type"]) == `"reasoning"` {
				return it
			}
		}
		return nil
	}

	t.Run("Stateless", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t, nil)
		const item = `{"type":"reasoning","id":"rs_up","summary":[{"type":"summary_text","text":"Counting."}],"encrypted_content":"gAAAAB-from-before=="}`
		res := g.post(t, "/v1/responses", `{"model":"pub-`+relaytest.ModeReasoning+`","store":false,"include":["reasoning.encrypted_content"],"input":[
			{"role":"user","content":"Hi"},`+item+`,
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello."}]},
			{"role":"user","content":"And then?"}]}`)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, 200, res.StatusCode, "%s", b)
		sent := reasoningOf(upstreamInput(t, g))
		require.NotNil(t, sent, "the reasoning item reaches the upstream")
		got, err := json.Marshal(sent)
		require.NoError(t, err)
		require.JSONEq(t, item, string(got), "unchanged")
	})

	t.Run("PreviousResponseID", func(t *testing.T) {
		t.Parallel()
		g := newGateway(t, nil)
		res := g.post(t, "/v1/responses", `{"model":"pub-`+relaytest.ModeReasoning+`","include":["reasoning.encrypted_content"],"input":"Hi"}`)
		var first struct {
			ID string `json:"id"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&first))
		require.Equal(t, 200, res.StatusCode)
		res = g.post(t, "/v1/responses", `{"model":"pub-`+relaytest.ModeReasoning+`","previous_response_id":"`+first.ID+`","input":"And then?"}`)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, 200, res.StatusCode, "%s", b)
		sent := reasoningOf(upstreamInput(t, g))
		require.NotNil(t, sent, "the stored reasoning item is replayed: %s", g.up.Last().Body)
		require.JSONEq(t, `"rs_up"`, string(sent["id"]))
		require.JSONEq(t, `"`+relaytest.EncryptedReasoning+`"`, string(sent["encrypted_content"]))

		// GET shows the stored item as it was answered.
		get := g.get(t, "/v1/responses/"+first.ID)
		b, err = io.ReadAll(get.Body)
		get.Body.Close()
		require.NoError(t, err)
		output, _ := replyReasoning(t, b, false)
		require.Len(t, output, 1, "%s", b)
		require.Equal(t, relaytest.EncryptedReasoning, *output[0].EncryptedContent)
	})
}

func jsonBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
