package demo

import (
	"hash/fnv"
	"strings"
	"unicode"

	"github.com/gatewaykit/gatewaykit/models"
)

// The ids of the demo models of the other access points.
const (
	// EmbeddingModel computes embeddings ([EmbeddingBackend]).
	EmbeddingModel = "demo-embedding"
	// ModerationModel classifies text ([ModerationBackend]).
	ModerationModel = "demo-moderation"
	// RerankModel ranks documents ([RerankBackend]).
	RerankModel = "demo-rerank"
	// ImageModel draws images ([ImageBackend]).
	ImageModel = "demo-image"
	// SpeechModel speaks text ([AudioBackend]).
	SpeechModel = "demo-tts"
	// TranscriptionModel transcribes and translates audio ([AudioBackend]).
	TranscriptionModel = "demo-whisper"
)

// AccessModels returns the catalogue entries of the demo models of the
// other access points of spec §4.4, one per endpoint type:
// [EmbeddingModel] (embeddings), [ModerationModel] (moderation),
// [RerankModel] (rerank), [ImageModel] (image-generation), [SpeechModel]
// (audio-speech) and [TranscriptionModel] (audio-transcription). Each
// call returns new values.
func AccessModels() []models.Model {
	m := func(id, name, desc string, t models.EndpointType) models.Model {
		return models.Model{ID: id, OwnedBy: "gatewaykit", Created: 1735689600, DisplayName: name,
			Description: desc, EndpointTypes: []models.EndpointType{t}}
	}
	return []models.Model{
		m(EmbeddingModel, "Demo embedding", "Deterministic demo embedding model of gatewaykit: unit vectors hashed from the input's words.", models.Embeddings),
		m(ModerationModel, "Demo moderation", "Deterministic demo moderation model of gatewaykit: flags documented trigger words.", models.Moderation),
		m(RerankModel, "Demo rerank", "Deterministic demo rerank model of gatewaykit: scores documents by word overlap with the query.", models.Rerank),
		m(ImageModel, "Demo image", "Deterministic demo image model of gatewaykit: draws a PNG pattern from the prompt.", models.ImageGeneration),
		m(SpeechModel, "Demo speech", "Deterministic demo text-to-speech model of gatewaykit: WAV tones as long as the text.", models.AudioSpeech),
		m(TranscriptionModel, "Demo transcription", "Deterministic demo speech-to-text model of gatewaykit: reads back the text of the demo's own WAV files.", models.AudioTranscription),
	}
}

// words returns the words of s, lower-cased: its runs of letters and
// digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// hash64 is the FNV-1a hash of s.
func hash64(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}
