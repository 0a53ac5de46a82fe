package demo_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/audio/audiotest"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/embeddings/embeddingstest"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/images/imagestest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
	"github.com/gatewaykit/gatewaykit/moderations/moderationstest"
	"github.com/gatewaykit/gatewaykit/rerank"
	"github.com/gatewaykit/gatewaykit/rerank/reranktest"
)

func accessModel(t *testing.T, id string) *models.Model {
	t.Helper()
	for _, m := range demo.AccessModels() {
		if m.ID == id {
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			return &m
		}
	}
	t.Fatalf("no demo model %s", id)
	return nil
}

func TestEmbeddingBackend(t *testing.T) {
	t.Parallel()
	embeddingstest.TestBackend(t, func(*testing.T) embeddings.Backend { return demo.NewEmbeddingBackend() }, accessModel(t, demo.EmbeddingModel))
}

func TestModerationBackend(t *testing.T) {
	t.Parallel()
	moderationstest.TestBackend(t, func(*testing.T) moderations.Backend { return demo.NewModerationBackend() }, accessModel(t, demo.ModerationModel))
}

func TestRerankBackend(t *testing.T) {
	t.Parallel()
	reranktest.TestBackend(t, func(*testing.T) rerank.Backend { return demo.NewRerankBackend() }, accessModel(t, demo.RerankModel))
}

func TestImageBackend(t *testing.T) {
	t.Parallel()
	imagestest.TestBackend(t, func(*testing.T) images.Backend { return demo.NewImageBackend() }, accessModel(t, demo.ImageModel), "64x48")
}

func TestAudioBackend(t *testing.T) {
	t.Parallel()
	wav := demo.WAV(make([]int16, demo.SpeechSampleRate), "One second. Of silence!")
	audiotest.TestBackend(t, func(*testing.T) audio.Backend { return demo.NewAudioBackend() },
		accessModel(t, demo.SpeechModel), accessModel(t, demo.TranscriptionModel), &audio.File{Name: "s.wav", Data: wav})
}

func TestRerankScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query, doc string
		want       float64
	}{
		{"red apple", "Red apple!", 1},
		{"red apple", "green pear", 0},
		{"red apple", "red", 0.7071},
		{"", "anything", 0},
		{"a b c d", "a", 0.5},
	}
	for _, tc := range tests {
		if got := demo.RerankScore(tc.query, tc.doc); got != tc.want {
			t.Errorf("RerankScore(%q, %q) = %v, want %v", tc.query, tc.doc, got, tc.want)
		}
	}
}
