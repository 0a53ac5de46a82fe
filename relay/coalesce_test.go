package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/sse"
)

// TestStalledUpstreamEventsReachTheClient checks, for each streaming
// endpoint, that the events an upstream sent before it stalled reach the
// client while it stalls: the relay flushes what it coalesced before it
// waits for the upstream. Then it hangs up, and checks that the upstream
// request is closed, the handler returns, and the goroutines (the relay's
// reader goroutine among them) are gone. It does not run in parallel: it
// counts goroutines.
func TestStalledUpstreamEventsReachTheClient(t *testing.T) {
	g := newGateway(t, nil)
	client := g.srv.Client()
	res := g.post(t, "/v1/chat/completions", chatBody(relaytest.ModeOK, `,"stream":true`))
	events(t, res.Body)
	g.waitServed()
	baseline := runtime.NumGoroutine()

	// The upstream sends two words, then waits until it is cancelled.
	want := relaytest.Word(0) + relaytest.Word(1)
	for i, tc := range []struct {
		path, body string
		text       func(ev sse.Event) string
	}{
		{"/v1/chat/completions", chatBody(relaytest.ModeHangMidStream, `,"stream":true`), func(ev sse.Event) string {
			var c struct {
				Choices []struct {
					Delta struct{ Content string }
				}
			}
			_ = json.Unmarshal([]byte(ev.Data), &c)
			if len(c.Choices) == 0 {
				return ""
			}
			return c.Choices[0].Delta.Content
		}},
		{"/v1/completions", completionsBody(relaytest.ModeHangMidStream, `,"stream":true`), func(ev sse.Event) string {
			var c struct{ Choices []struct{ Text string } }
			_ = json.Unmarshal([]byte(ev.Data), &c)
			if len(c.Choices) == 0 {
				return ""
			}
			return c.Choices[0].Text
		}},
		{"/v1/responses", `{"model":"pub-` + relaytest.ModeHangMidStream + `","input":"Hi","stream":true}`, func(ev sse.Event) string {
			if ev.Type != "response.output_text.delta" {
				return ""
			}
			var d struct{ Delta string }
			_ = json.Unmarshal([]byte(ev.Data), &d)
			return d.Delta
		}},
	} {
		ctx, hangUp := context.WithCancel(t.Context())
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.srv.URL+tc.path, strings.NewReader(tc.body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+clientKey)
		req.Header.Set("Content-Type", "application/json")
		got := make(chan string, 1)
		go func() {
			var text strings.Builder
			defer func() { got <- text.String() }()
			res, err := client.Do(req)
			if err != nil {
				return
			}
			defer res.Body.Close()
			for ev, err := range sse.Read(res.Body) {
				if err != nil {
					return
				}
				text.WriteString(tc.text(ev))
				if text.String() == want {
					return
				}
			}
		}()
		select {
		case text := <-got:
			require.Equal(t, want, text, "%s: the words sent before the stall", tc.path)
		case <-time.After(10 * time.Second): // a bound, not an assertion on speed
			t.Fatalf("%s: the words sent before the upstream stalled did not arrive", tc.path)
		}
		hangUp()
		<-g.up.Requests()[i+1].Cancelled
		g.waitServed()
	}
	require.Eventually(t, func() bool {
		client.CloseIdleConnections()
		return runtime.NumGoroutine() <= baseline
	}, 10*time.Second, 10*time.Millisecond, "goroutines: %d, baseline %d", runtime.NumGoroutine(), baseline)
}
