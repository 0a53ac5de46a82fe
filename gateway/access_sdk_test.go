package gateway_test

import (
	"net/http/httptest"
	"strings"
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
	c.Moderations = demo.NewModerationBackend()
	c.Rerank = demo.NewRerankBackend()
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

func TestSDKModerations(t *testing.T) {
	t.Parallel()
	client, _ := newAccessDemo(t, nil)
	res, err := client.Moderations.New(t.Context(), openai.ModerationNewParams{
		Model: demo.ModerationModel,
		Input: openai.ModerationNewParamsInputUnion{OfStringArray: []string{"Have a nice day", "I will kill the gore"}},
	})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.ID, "modr-"), res.ID)
	require.Equal(t, demo.ModerationModel, res.Model)
	require.Len(t, res.Results, 2)
	require.False(t, res.Results[0].Flagged)
	got := res.Results[1]
	require.True(t, got.Flagged)
	require.True(t, got.Categories.Violence)
	require.True(t, got.Categories.ViolenceGraphic)
	require.False(t, got.Categories.Hate)
	require.Greater(t, got.CategoryScores.ViolenceGraphic, 0.9)
	require.True(t, got.JSON.Categories.Valid())
	for _, f := range []interface{ Valid() bool }{got.Categories.JSON.SelfHarmInstructions, got.Categories.JSON.SexualMinors,
		got.CategoryScores.JSON.IllicitViolent, got.CategoryAppliedInputTypes.JSON.HateThreatening} {
		require.True(t, f.Valid(), "every category is present")
	}
	require.Equal(t, []string{"text"}, got.CategoryAppliedInputTypes.Violence)

	img, err := client.Moderations.New(t.Context(), openai.ModerationNewParams{
		Model: demo.ModerationModel,
		Input: openai.ModerationNewParamsInputUnion{OfModerationMultiModalArray: []openai.ModerationMultiModalInputUnionParam{
			{OfText: &openai.ModerationTextInputParam{Text: "so hopeless"}},
			{OfImageURL: &openai.ModerationImageURLInputParam{ImageURL: openai.ModerationImageURLInputImageURLParam{URL: "https://example.com/a.png"}}},
		}},
	})
	require.NoError(t, err)
	require.Len(t, img.Results, 1)
	require.True(t, img.Results[0].Categories.SelfHarmIntent)
	require.Equal(t, []string{"text", "image"}, img.Results[0].CategoryAppliedInputTypes.SelfHarmIntent)
	require.Equal(t, []string{"text"}, img.Results[0].CategoryAppliedInputTypes.SexualMinors)
}

// TestRerank has no SDK (the OpenAI SDK has no rerank): a raw request.
func TestRerank(t *testing.T) {
	t.Parallel()
	g := newDemo(t, withAccessDemo)
	status, body := do(t, g, "POST", "/v1/rerank", "sk-demo",
		`{"model":"demo-rerank","query":"capital of France","documents":["Cats.","Paris is the capital of France."],"top_n":1}`)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, `"results":[{"index":1,"relevance_score":0.7071,"document":{"text":"Paris is the capital of France."}}]`)
}
