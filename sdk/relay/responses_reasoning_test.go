package relay_test

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// TestSDKResponsesReasoning: the official SDK reads the relayed reasoning
// item, streaming or not; the next turn (previous_response_id) does not
// send the gateway's reasoning item upstream, which could not decrypt it.
func TestSDKResponsesReasoning(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	c := g.sdk().Responses
	params := oresponses.ResponseNewParams{Model: "pub-reasoning", Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}}
	first, err := c.New(t.Context(), params)
	require.NoError(t, err)
	require.Len(t, first.Output, 2)
	require.Equal(t, "reasoning", first.Output[0].Type)
	require.Equal(t, reasoningText, first.Output[0].AsReasoning().Summary[0].Text)
	require.Equal(t, relaytest.Text(8), first.OutputText())

	next := params
	next.PreviousResponseID = openai.String(first.ID)
	_, err = c.New(t.Context(), next)
	require.NoError(t, err)
	input := string(upstreamSaw(t, g)["input"])
	require.NotContains(t, input, `"reasoning"`)
	require.Contains(t, input, relaytest.Text(8), "the rest of the conversation goes")

	stream := c.NewStreaming(t.Context(), params)
	var summary strings.Builder
	var final oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseReasoningSummaryTextDeltaEvent:
			summary.WriteString(e.Delta)
		case oresponses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, reasoningText, summary.String())
	require.Equal(t, "reasoning", final.Output[0].Type)
	require.Equal(t, relaytest.Text(8), final.OutputText())
}
