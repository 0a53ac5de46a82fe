package gateway_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"io"
	"net/http"
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

func TestSDKImages(t *testing.T) {
	t.Parallel()
	client, srv := newAccessDemo(t, nil)
	b64, err := client.Images.Generate(t.Context(), openai.ImageGenerateParams{
		Model: demo.ImageModel, Prompt: "a red kite over the sea", Size: "256x256",
		ResponseFormat: openai.ImageGenerateParamsResponseFormatB64JSON,
	})
	require.NoError(t, err)
	require.Len(t, b64.Data, 1)
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].B64JSON)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Equal(t, image.Rect(0, 0, 256, 256), img.Bounds())
	require.Equal(t, openai.ImagesResponseSize("256x256"), b64.Size)
	require.Equal(t, int64(6), b64.Usage.InputTokens)

	byURL, err := client.Images.Generate(t.Context(), openai.ImageGenerateParams{
		Model: demo.ImageModel, Prompt: "a red kite over the sea", Size: "256x256", N: openai.Int(2),
		ResponseFormat: openai.ImageGenerateParamsResponseFormatURL,
	})
	require.NoError(t, err)
	require.Len(t, byURL.Data, 2)
	u := byURL.Data[0].URL
	require.True(t, strings.HasPrefix(u, "/v1/images/files/"), u)
	req, err := http.NewRequestWithContext(t.Context(), "GET", srv.URL+u, nil)
	require.NoError(t, err)
	unauth, err := srv.Client().Do(req)
	require.NoError(t, err)
	unauth.Body.Close()
	require.Equal(t, 401, unauth.StatusCode, "the file route is authenticated")
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "image/png", res.Header.Get("Content-Type"))
	fetched, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, raw, fetched, "the URL serves the image that b64_json sent")
}

// speakWAV asks the demo for the speech of text through the SDK and
// returns the WAV bytes.
func speakWAV(t *testing.T, client openai.Client, text string, speed float64) []byte {
	t.Helper()
	res, err := client.Audio.Speech.New(t.Context(), openai.AudioSpeechNewParams{
		Model: demo.SpeechModel, Input: text, Speed: openai.Float(speed),
		Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatWAV,
	})
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "audio/wav", res.Header.Get("Content-Type"))
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return b
}

func TestSDKAudio(t *testing.T) {
	t.Parallel()
	client, srv := newAccessDemo(t, nil)
	const text = "The quick brown fox. It jumps over the lazy dog!"
	wav := speakWAV(t, client, text, 1)
	require.Equal(t, "RIFF", string(wav[:4]))
	require.Equal(t, "WAVE", string(wav[8:12]))
	require.Less(t, len(speakWAV(t, client, text, 2)), len(wav)*6/10, "speed 2 is about half as long")

	_, err := client.Audio.Speech.New(t.Context(), openai.AudioSpeechNewParams{
		Model: demo.SpeechModel, Input: text, Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")},
		ResponseFormat: openai.AudioSpeechNewParamsResponseFormatMP3,
	})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 400, apiErr.StatusCode)
	require.Equal(t, "response_format", apiErr.Param)

	file := func() io.Reader { return openai.File(bytes.NewReader(wav), "speech.wav", "audio/wav") }
	tr, err := client.Audio.Transcriptions.New(t.Context(), openai.AudioTranscriptionNewParams{Model: demo.TranscriptionModel, File: file()})
	require.NoError(t, err)
	require.Equal(t, text, tr.Text, "the speech round-trips to its text")
	require.Equal(t, "tokens", tr.Usage.Type)
	require.Equal(t, int64(demo.CountTokens(text)), tr.Usage.OutputTokens)

	verbose, err := client.Audio.Transcriptions.New(t.Context(), openai.AudioTranscriptionNewParams{
		Model: demo.TranscriptionModel, File: file(), ResponseFormat: openai.AudioResponseFormatVerboseJSON,
		TimestampGranularities: []string{"word", "segment"},
	})
	require.NoError(t, err)
	v := verbose.AsTranscriptionVerbose()
	require.Equal(t, text, v.Text)
	require.Len(t, v.Segments, 2)
	require.Equal(t, " It jumps over the lazy dog!", v.Segments[1].Text)
	require.Len(t, v.Words, 10)
	require.Equal(t, "dog", v.Words[9].Word)
	require.InDelta(t, v.Duration, float64(len(wav)-44)/48000, 0.1)

	for _, format := range []struct {
		f    openai.AudioResponseFormat
		want string
	}{
		{openai.AudioResponseFormatText, text + "\n"},
		{openai.AudioResponseFormatSRT, "1\n00:00:00,000 --> "},
		{openai.AudioResponseFormatVTT, "WEBVTT\n\n00:00:00.000 --> "},
	} {
		// The SDK reads these formats as text: a *string destination
		// (the Transcriptions.New doc).
		var body string
		req := openai.AudioTranscriptionNewParams{Model: demo.TranscriptionModel, File: file(), ResponseFormat: format.f}
		data, ct, err := req.MarshalMultipart()
		require.NoError(t, err)
		require.NoError(t, client.Post(t.Context(), "audio/transcriptions", nil, &body,
			option.WithRequestBody(ct, data)))
		require.True(t, strings.HasPrefix(body, format.want), "%s: %q", format.f, body)
		require.Contains(t, body, "It jumps over the lazy dog!")
	}

	translation, err := client.Audio.Translations.New(t.Context(), openai.AudioTranslationNewParams{Model: demo.TranscriptionModel, File: file()})
	require.NoError(t, err)
	require.Equal(t, text, translation.Text)

	// A file that is not the demo's speech gets a description of itself.
	other, err := client.Audio.Transcriptions.New(t.Context(), openai.AudioTranscriptionNewParams{
		Model: demo.TranscriptionModel, File: openai.File(strings.NewReader("not audio"), "notes.txt", "text/plain"),
	})
	require.NoError(t, err)
	require.Contains(t, other.Text, `"notes.txt", 9 bytes of text/plain`)
	_ = srv
}
