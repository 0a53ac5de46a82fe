package console_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/console"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/responses"
)

// heldAfter is how many deltas of a background response the test backend
// streams before it holds the rest.
const heldAfter = 3

// holdingResponses is the demo's responses backend, except that a
// background response holds after its first heldAfter deltas until
// release is closed (or its run's context ends, as a cancel ends it): a
// test can then act on a run that is certainly in progress, with some
// of its text written.
type holdingResponses struct {
	*demo.ResponsesBackend
	release chan struct{}
}

func (h *holdingResponses) Stream(ctx context.Context, p *responses.Params) iter.Seq2[responses.Delta, error] {
	inner := h.ResponsesBackend.Stream(ctx, p)
	if !p.InBackground() {
		return inner
	}
	return func(yield func(responses.Delta, error) bool) {
		n := 0
		for d, err := range inner {
			if n == heldAfter {
				p.Flush()
				select {
				case <-h.release:
				case <-ctx.Done():
					yield(responses.Delta{}, ctx.Err())
					return
				}
			}
			n++
			if !yield(d, err) || err != nil {
				return
			}
		}
	}
}

// storedText is the output text of the stored response id, as GET
// /v1/responses/{id} answers it, and its status.
func storedText(t *testing.T, e *testEnv, id string) (text, status string) {
	t.Helper()
	req, err := http.NewRequest("GET", e.url+"/v1/responses/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var r struct {
		Status string
		Output []struct {
			Type    string
			Content []struct{ Type, Text string }
		}
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&r))
	var b strings.Builder
	for _, it := range r.Output {
		for _, c := range it.Content {
			if it.Type == "message" && c.Type == "output_text" {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String(), r.Status
}

func TestBrowserConversationBackgroundTurns(t *testing.T) {
	t.Parallel()
	e, ctx := openTab(t, console.Config{}, "sk-demo", "conv")
	last := `#conv-log .msg.assistant:last-child`
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#conv-model"), demo.ChatModel),
		chromedp.Click(chromedp.CSS("#conv-background")))
	send := func(msg string) string {
		t.Helper()
		do(t, ctx,
			chromedp.SendKeys(chromedp.CSS("#conv-input"), msg),
			chromedp.Click(chromedp.CSS("#conv-send")))
		// The run is held after its first deltas: in progress, with text.
		wait(t, ctx, `document.querySelector('`+last+`[data-status="in_progress"] .text')?.textContent`)
		require.Equal(t, "in_progress", text(t, ctx, last+" .status"))
		require.True(t, eval[bool](t, ctx, `document.querySelector('`+last+`').hasAttribute('aria-busy')`))
		id := eval[string](t, ctx, `document.querySelector('`+last+`').dataset.responseId`)
		require.True(t, strings.HasPrefix(id, "resp_"), id)
		require.Equal(t, id, text(t, ctx, last+" .response-id"))
		seq, err := strconv.Atoi(text(t, ctx, last+" .seq"))
		require.NoError(t, err, "the last sequence number is shown")
		require.Greater(t, seq, 0)
		return id
	}

	// Cancel: the run ends cancelled, with the text written so far.
	first := send("Tell me a story.")
	turn := `#conv-log [data-response-id="` + first + `"]`
	do(t, ctx, chromedp.Click(chromedp.CSS(turn+" .bg-cancel")))
	wait(t, ctx, `document.querySelector('`+turn+`[data-status="cancelled"]:not([aria-busy])')`)
	require.Equal(t, "cancelled", text(t, ctx, turn+" .status"))
	require.Equal(t, "starts the conversation · cancelled", text(t, ctx, turn+" .meta"))
	stored, status := storedText(t, e, first)
	require.Equal(t, "cancelled", status)
	require.NotEmpty(t, stored)
	require.Equal(t, stored, text(t, ctx, turn+" .text"), "the text written until the cancel")
	require.True(t, eval[bool](t, ctx, `document.querySelector('`+turn+` .bg-cancel').disabled && document.querySelector('`+turn+` .bg-resume').disabled`))
	require.Equal(t, "nothing (a new conversation)", text(t, ctx, "#conv-previous"), "a cancelled turn is not continued from")
	require.False(t, eval[bool](t, ctx, `document.getElementById('conv-send').disabled`))

	// Stop detaches the page; the run goes on, and a Cancel then shows
	// the answer: the status, and the text written until the cancel.
	detach := func(turn string) {
		t.Helper()
		do(t, ctx, chromedp.Click(chromedp.CSS("#conv-stop")))
		wait(t, ctx, `document.querySelector('`+turn+`.detached:not([aria-busy])')`)
	}
	cancelled := send("Count to ten.")
	turn = `#conv-log [data-response-id="` + cancelled + `"]`
	detach(turn)
	require.Equal(t, "in_progress", text(t, ctx, turn+" .status"))
	do(t, ctx, chromedp.Click(chromedp.CSS(turn+" .bg-cancel")))
	wait(t, ctx, `document.querySelector('`+turn+`[data-status="cancelled"]')`)
	stored, status = storedText(t, e, cancelled)
	require.Equal(t, "cancelled", status)
	require.Equal(t, stored, text(t, ctx, turn+" .text"))
	require.Equal(t, "starts the conversation · Detached: the run goes on. · cancelled", text(t, ctx, turn+" .meta"))
	require.True(t, eval[bool](t, ctx, `document.querySelector('`+turn+` .bg-resume').disabled`))

	// A stream that the network drops leaves the run going on, to be
	// resumed; Poll shows its stored status.
	second := send("Hello there, console")
	turn = `#conv-log [data-response-id="` + second + `"]`
	e.drop()
	wait(t, ctx, `document.querySelector('`+turn+`.detached:not([aria-busy])')`)
	require.Regexp(t, `^starts the conversation · The stream dropped \(.+\): the run goes on\.$`, text(t, ctx, turn+" .meta"))
	require.Equal(t, "in_progress", text(t, ctx, turn+" .status"))
	require.True(t, eval[bool](t, ctx, `document.getElementById('conv-error').hidden`), "no error: the run goes on")
	require.True(t, eval[bool](t, ctx, `!document.querySelector('`+turn+` .bg-resume').disabled`))
	seq := text(t, ctx, turn+" .seq")
	before := text(t, ctx, turn+" .text")
	do(t, ctx, chromedp.Click(chromedp.CSS(turn+" .bg-poll")))
	wait(t, ctx, `document.querySelector('`+turn+` .polled')`)
	require.Contains(t, text(t, ctx, turn+" .polled"), ": in_progress")
	screenshot(t, ctx, "conversations-background")

	// Resume: the events after the last one seen, each once, to the end.
	close(e.release)
	do(t, ctx, chromedp.Click(chromedp.CSS(turn+" .bg-resume")))
	wait(t, ctx, `document.querySelector('`+turn+`[data-status="completed"]:not([aria-busy])')`)
	got := text(t, ctx, turn+" .text")
	require.True(t, strings.HasPrefix(got, before), "the resumed events are appended: %q after %q", got, before)
	require.Greater(t, len(got), len(before))
	stored, status = storedText(t, e, second)
	require.Equal(t, "completed", status)
	require.Equal(t, stored, got, "each event exactly once")
	require.Contains(t, got, `You said: "Hello there, console"`)
	resumed := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map(r => r.name).filter(n => n.includes('/v1/responses/`+second+`?'))`)
	require.Equal(t, []string{e.url + "/v1/responses/" + second + "?stream=true&starting_after=" + seq}, resumed)
	require.Equal(t, second, text(t, ctx, "#conv-previous"), "the completed turn is continued from")
	require.Regexp(t, `^Usage: \d+ input \+ \d+ output = \d+ tokens$`, text(t, ctx, "#conv-usage"))
	require.True(t, eval[bool](t, ctx, `document.querySelector('`+turn+` .bg-resume').disabled`))
	require.Equal(t, "starts the conversation · The stream dropped (network error): the run goes on. · resumed after event "+seq, text(t, ctx, turn+" .meta"))
	require.False(t, eval[bool](t, ctx, `document.querySelector('`+turn+`').matches('.detached') || !!document.querySelector('`+turn+` .polled')`))
}
