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

func completionsBody(mode, extra string) string {
	return `{"model":"pub-` + mode + `","prompt":"Say hi","suffix":"!","echo":false,"best_of":1,"logit_bias":{"50256":-100}` + extra + `}`
}

func TestCompletionsComplete(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	body := completionsBody(relaytest.ModeOK, `,"n":2`)
	res := g.post(t, "/v1/completions", body, "OpenAI-Project", "proj-1")
	require.Equal(t, 200, res.StatusCode)
	v := decode(t, res.Body)
	require.True(t, strings.HasPrefix(v["id"].(string), "cmpl-"))
	require.Equal(t, "pub-ok", v["model"])
	choices := v["choices"].([]any)
	require.Len(t, choices, 2)
	for _, c := range choices {
		require.Equal(t, relaytest.Text(8), c.(map[string]any)["text"])
	}
	require.Equal(t, int64(11+16), g.charged(t))

	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &want))
	want["model"] = json.RawMessage(`"ok"`)
	got := upstreamSaw(t, g)
	require.Equal(t, len(want), len(got))
	for k, v := range want {
		require.Equal(t, string(v), string(got[k]), "member %s", k)
	}
	require.Equal(t, "proj-1", g.up.Last().Header.Get("OpenAI-Project"))
	require.Equal(t, "Bearer "+upstreamKey, g.up.Last().Header.Get("Authorization"))
}

func TestCompletionsStream(t *testing.T) {
	t.Parallel()
	for _, includeUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "WithoutUsage", true: "WithUsage"}[includeUsage], func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil)
			extra := `,"stream":true`
			if includeUsage {
				extra += `,"stream_options":{"include_usage":true}`
			}
			res := g.post(t, "/v1/completions", completionsBody(relaytest.ModeOK, extra))
			require.Equal(t, 200, res.StatusCode)
			evs := events(t, res.Body)
			require.Equal(t, sse.DoneData, evs[len(evs)-1])
			var text string
			usageChunks := 0
			for _, e := range evs[:len(evs)-1] {
				var c struct {
					ID      string `json:"id"`
					Choices []struct {
						Text string `json:"text"`
					} `json:"choices"`
					Usage map[string]int `json:"usage"`
				}
				require.NoError(t, json.Unmarshal([]byte(e), &c))
				require.True(t, strings.HasPrefix(c.ID, "cmpl-"))
				if c.Usage != nil {
					usageChunks++
					require.Equal(t, map[string]int{"prompt_tokens": 11, "completion_tokens": 8, "total_tokens": 19}, c.Usage)
					continue
				}
				text += c.Choices[0].Text
			}
			require.Equal(t, relaytest.Text(8), text)
			require.Equal(t, map[bool]int{false: 0, true: 1}[includeUsage], usageChunks)
			require.JSONEq(t, `{"include_usage":true}`, string(upstreamSaw(t, g)["stream_options"]))
			require.Equal(t, int64(19), g.charged(t))
		})
	}
}

func TestCompletionsErrors(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/completions", completionsBody(relaytest.ModeStatus429, ""))
	require.Equal(t, 429, res.StatusCode)
	require.Equal(t, "7", res.Header.Get("Retry-After"))
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, "rate_limit_exceeded", errorOf(t, string(b))["code"])

	res = g.post(t, "/v1/completions", completionsBody(relaytest.ModeStatus500, `,"stream":true`))
	require.Equal(t, 502, res.StatusCode)
	b, _ = io.ReadAll(res.Body)
	require.Equal(t, "bad_gateway", errorOf(t, string(b))["code"])

	res = g.post(t, "/v1/completions", completionsBody(relaytest.ModeDie, `,"stream":true`))
	require.Equal(t, 200, res.StatusCode)
	evs := events(t, res.Body)
	require.Equal(t, "bad_gateway", errorOf(t, evs[len(evs)-1])["code"])
	// Prompt "Say hi" (2), then "tok0" (1) and " tok1" (2) were streamed.
	require.Equal(t, int64(2+1+2), g.charged(t))
}
