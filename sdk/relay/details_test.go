package relay_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	oresponses "github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay/relaytest"
)

// TestSDKUsageDetails: the official SDK reads a relayed upstream's cached
// and reasoning tokens in chat usage, streamed and not, and in responses
// usage (issue 26).
func TestSDKUsageDetails(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	client := g.sdk()
	params := openai.ChatCompletionNewParams{Model: "pub-details", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")}}
	c, err := client.Chat.Completions.New(t.Context(), params)
	require.NoError(t, err)
	require.Equal(t, int64(relaytest.CachedTokens), c.Usage.PromptTokensDetails.CachedTokens)
	require.Equal(t, int64(relaytest.ReasoningTokens), c.Usage.CompletionTokensDetails.ReasoningTokens)

	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(t.Context(), params)
	acc := openai.ChatCompletionAccumulator{}
	for stream.Next() {
		require.True(t, acc.AddChunk(stream.Current()))
	}
	require.NoError(t, stream.Err())
	require.Equal(t, int64(relaytest.CachedTokens), acc.Usage.PromptTokensDetails.CachedTokens)
	require.Equal(t, int64(relaytest.ReasoningTokens), acc.Usage.CompletionTokensDetails.ReasoningTokens)

	r, err := client.Responses.New(t.Context(), oresponses.ResponseNewParams{Model: "pub-details",
		Input: oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	require.NoError(t, err)
	require.Equal(t, int64(relaytest.CachedTokens), r.Usage.InputTokensDetails.CachedTokens)
	require.Equal(t, int64(relaytest.ReasoningTokens), r.Usage.OutputTokensDetails.ReasoningTokens)
}

// TestSDKEncryptedReasoning: a stateless client of the official SDK asks
// for the encrypted reasoning, gets it, and sends the reasoning item back
// in its next input (store: false), which reaches the upstream as the
// upstream made it (issue 26).
func TestSDKEncryptedReasoning(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	c := g.sdk().Responses
	first, err := c.New(t.Context(), oresponses.ResponseNewParams{Model: "pub-reasoning", Store: openai.Bool(false),
		Include: []oresponses.ResponseIncludable{oresponses.ResponseIncludableReasoningEncryptedContent},
		Input:   oresponses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")}})
	require.NoError(t, err)
	require.Equal(t, "reasoning", first.Output[0].Type)
	rs := first.Output[0].AsReasoning()
	require.Equal(t, "rs_up", rs.ID)
	require.Equal(t, relaytest.EncryptedReasoning, rs.EncryptedContent)

	input := oresponses.ResponseInputParam{oresponses.ResponseInputItemParamOfMessage("Hi", oresponses.EasyInputMessageRoleUser)}
	reasoning := first.Output[0].AsReasoning().ToParam()
	message := first.Output[1].AsMessage().ToParam()
	input = append(input, oresponses.ResponseInputItemUnionParam{OfReasoning: &reasoning},
		oresponses.ResponseInputItemUnionParam{OfOutputMessage: &message})
	input = append(input, oresponses.ResponseInputItemParamOfMessage("And then?", oresponses.EasyInputMessageRoleUser))
	_, err = c.New(t.Context(), oresponses.ResponseNewParams{Model: "pub-reasoning", Store: openai.Bool(false),
		Include: []oresponses.ResponseIncludable{oresponses.ResponseIncludableReasoningEncryptedContent},
		Input:   oresponses.ResponseNewParamsInputUnion{OfInputItemList: input}})
	require.NoError(t, err)
	var sent []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(upstreamSaw(t, g)["input"], &sent))
	var got map[string]json.RawMessage
	for _, it := range sent {
		if string(it["type"]) == `"reasoning"` {
			got = it
		}
	}
	require.NotNil(t, got, "the reasoning item reaches the upstream")
	require.JSONEq(t, `"rs_up"`, string(got["id"]))
	require.JSONEq(t, `"`+relaytest.EncryptedReasoning+`"`, string(got["encrypted_content"]))
}
