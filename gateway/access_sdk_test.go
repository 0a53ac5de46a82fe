package gateway_test

import (
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
)

// newAccessDemo serves the demo gateway with the demo backends of every
// access point, and returns an official SDK client of key sk-demo and the
// server's URL.
func newAccessDemo(t *testing.T, extra func(*gateway.Config)) (openai.Client, *httptest.Server) {
	t.Helper()
	g := newDemo(t, func(c *gateway.Config) {
		withAccessDemo(c)
		if extra != nil {
			extra(c)
		}
	})
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("sk-demo"),
		option.WithMaxRetries(0), option.WithHTTPClient(srv.Client())), srv
}

// withAccessDemo sets the demo backends of the access points.
func withAccessDemo(c *gateway.Config) {
	c.Embeddings = demo.NewEmbeddingBackend()
}

func TestSDKEmbeddings(t *testing.T) {
	t.Parallel()
	client, _ := newAccessDemo(t, nil)
	input := openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"red apple pie", "green apple"}}
	float, err := client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
		Model: demo.EmbeddingModel, Input: input, Dimensions: openai.Int(64),
	})
	require.NoError(t, err)
	require.Equal(t, demo.EmbeddingModel, float.Model)
	require.Len(t, float.Data, 2)
	require.Equal(t, int64(5), float.Usage.PromptTokens)
	require.Equal(t, int64(5), float.Usage.TotalTokens)
	want := demo.Embedding([]string{"red", "apple", "pie"}, 64)
	require.Len(t, float.Data[0].Embedding, 64)
	for i, x := range want {
		require.InDelta(t, float64(x), float.Data[0].Embedding[i], 1e-7)
	}

	b64, err := client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
		Model: demo.EmbeddingModel, Input: input, Dimensions: openai.Int(64),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64,
	})
	require.NoError(t, err)
	require.Len(t, b64.Data, 2)
	for i := range b64.Data {
		require.Len(t, b64.Data[i].Embedding, 64)
		for j, x := range b64.Data[i].Embedding {
			require.Equal(t, float32(float.Data[i].Embedding[j]), float32(x), "base64 decodes to the same float32 values")
		}
	}

	tokens, err := client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{
		Model: demo.EmbeddingModel, Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfTokenArrays: [][]int64{{1, 2, 3}}},
	})
	require.NoError(t, err)
	require.Len(t, tokens.Data[0].Embedding, demo.EmbeddingDimensions)
	require.Equal(t, int64(3), tokens.Usage.PromptTokens)

	_, err = client.Embeddings.New(t.Context(), openai.EmbeddingNewParams{Model: demo.ChatModel, Input: input})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 400, apiErr.StatusCode)
	require.Equal(t, "model", apiErr.Param)
}
