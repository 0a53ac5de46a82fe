package responses_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/responses"
)

// TestEncryptedReasoningItems: a backend's reasoning item with encrypted
// content keeps it and its id, with a summary or without one, streamed
// and not; the stream sends no summary part for an item without a
// summary (issue 26).
func TestEncryptedReasoningItems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		deltas  scripted
		summary []any
		parts   int // reasoning_summary_part.added events
	}{
		{"EncryptedOnly", scripted{
			{Item: 0, EncryptedContent: "enc-1", ID: "rs_backend"},
			{Item: 1, Text: "Hello."},
		}, []any{}, 0},
		{"SummaryThenEncrypted", scripted{
			{Item: 0, Reasoning: "Think", ID: "rs_backend"},
			{Item: 0, Reasoning: "ing."},
			{Item: 0, EncryptedContent: "enc-1"},
			{Item: 1, Text: "Hello."},
		}, []any{map[string]any{"type": "summary_text", "text": "Thinking."}}, 1},
		{"EncryptedThenSummary", scripted{
			{Item: 0, EncryptedContent: "enc-0", ID: "rs_backend"},
			{Item: 0, Reasoning: "Thinking."},
			{Item: 0, EncryptedContent: "enc-1"},
			{Item: 1, Text: "Hello."},
		}, []any{map[string]any{"type": "summary_text", "text": "Thinking."}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandlerWith(tc.deltas)
			w := post(t, h, `{"model":"demo-chat","input":"Hi","stream":true}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			evs := readEvents(t, w.Body.String())
			final := checkStream(t, evs)
			want := map[string]any{"id": "rs_backend", "type": "reasoning", "status": "completed", "summary": tc.summary, "encrypted_content": "enc-1"}
			require.Equal(t, want, final["output"].([]any)[0], "response.completed")
			parts := 0
			for _, ev := range evs {
				switch ev.Name {
				case responses.EventReasoningPartAdded:
					parts++
				case responses.EventOutputItemDone:
					if ev.JSON["output_index"] == 0.0 {
						require.Equal(t, want, ev.JSON["item"], "output_item.done")
					}
				}
			}
			require.Equal(t, tc.parts, parts)

			// The same items whole, from a backend that does not stream.
			w = post(t, newHandlerWith(completeOnly{wholeOf(tc.deltas)}), `{"model":"demo-chat","input":"Hi"}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, want, decode(t, w.Body.String())["output"].([]any)[0])
		})
	}
}

// TestEncryptedContentOnAMessageIsRefused: encrypted content belongs to
// reasoning items only: on a message it breaks the stream.
func TestEncryptedContentOnAMessageIsRefused(t *testing.T) {
	t.Parallel()
	h := newHandlerWith(scripted{{Item: 0, Text: "Hi"}, {Item: 0, EncryptedContent: "enc"}})
	w := post(t, h, `{"model":"demo-chat","input":"Hi","stream":true}`)
	final := checkStream(t, readEvents(t, w.Body.String()))
	require.Equal(t, "failed", final["status"])
}

// wholeOf is the Result that deltas amount to, as a backend that does
// not stream returns it.
type wholeOf scripted

func (s wholeOf) Complete(context.Context, *responses.Params) (*responses.Result, error) {
	res := &responses.Result{}
	for _, d := range s {
		if d.Item == len(res.Output) {
			res.Output = append(res.Output, responses.Output{ID: d.ID})
		}
		o := &res.Output[d.Item]
		o.Text += d.Text
		o.Reasoning += d.Reasoning
		if d.EncryptedContent != "" {
			o.EncryptedContent = d.EncryptedContent
		}
	}
	return res, nil
}
