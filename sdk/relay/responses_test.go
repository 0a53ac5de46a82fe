package relay_test

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

func TestSDKResponses(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	c := g.sdk().Responses
	first, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: "pub-ok", Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("My colour is teal.")}})
	require.NoError(t, err)
	require.Equal(t, relaytest.Text(8), first.OutputText())
	second, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: "pub-ok",
		Input:              oresponses.ResponseNewParamsInputUnion{OfString: openai.String("What is it?")},
		PreviousResponseID: openai.String(first.ID)})
	require.NoError(t, err)
	require.Equal(t, first.ID, second.PreviousResponseID)
	require.Contains(t, string(upstreamSaw(t, g)["input"]), "My colour is teal.")

	stream := c.NewStreaming(t.Context(), oresponses.ResponseNewParams{Model: "pub-ok", Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	var deltas strings.Builder
	var final oresponses.Response
	for stream.Next() {
		switch e := stream.Current().AsAny().(type) {
		case oresponses.ResponseTextDeltaEvent:
			deltas.WriteString(e.Delta)
		case oresponses.ResponseCompletedEvent:
			final = e.Response
		}
	}
	require.NoError(t, stream.Err())
	require.Equal(t, relaytest.Text(8), deltas.String())
	require.Equal(t, deltas.String(), final.OutputText())
	require.Equal(t, int64(19), final.Usage.TotalTokens)
	got, err := c.Get(t.Context(), final.ID, oresponses.ResponseGetParams{})
	require.NoError(t, err)
	require.Equal(t, final.OutputText(), got.OutputText())
}
