// Package audiotest is the conformance suite of audio.Backend: every
// implementation runs it.
package audiotest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/audio"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestBackend checks the audio.Backend contract against the backend that
// newBackend returns (called once per subtest): speech with speechModel
// (nil skips it) and transcription with transcriptionModel (nil skips
// it), of file, an audio file the backend can read.
func TestBackend(t *testing.T, newBackend func(t *testing.T) audio.Backend, speechModel, transcriptionModel *models.Model, file *audio.File) {
	t.Run("SpeaksInItsDefaultFormat", func(t *testing.T) {
		t.Parallel()
		if speechModel == nil {
			t.Skip("the backend does not speak")
		}
		req := &audio.SpeechRequest{Model: speechModel.ID, Input: "Hello there.", Voice: audio.Voice{Name: "alloy"}}
		require.NoError(t, audio.ValidateSpeech(req))
		sp, err := newBackend(t).Speech(t.Context(), &audio.SpeechParams{Request: req, Model: speechModel})
		require.NoError(t, err)
		require.NotEmpty(t, sp.Audio)
	})
	t.Run("RefusesAFormatItCannotMakeWithA400", func(t *testing.T) {
		t.Parallel()
		if speechModel == nil {
			t.Skip("the backend does not speak")
		}
		b := newBackend(t)
		for _, f := range []string{audio.SpeechMP3, audio.SpeechOpus, audio.SpeechAAC, audio.SpeechFLAC, audio.SpeechWAV, audio.SpeechPCM} {
			req := &audio.SpeechRequest{Model: speechModel.ID, Input: "Hi.", Voice: audio.Voice{Name: "alloy"}, ResponseFormat: f}
			sp, err := b.Speech(t.Context(), &audio.SpeechParams{Request: req, Model: speechModel})
			if err != nil {
				var e *apierrors.Error
				require.True(t, errors.As(err, &e), "%s: %v", f, err)
				require.Equal(t, 400, e.Status, f)
				continue
			}
			require.NotEmpty(t, sp.Audio, f)
		}
	})
	t.Run("TranscribesWithTimedSegments", func(t *testing.T) {
		t.Parallel()
		if transcriptionModel == nil {
			t.Skip("the backend does not transcribe")
		}
		for _, translate := range []bool{false, true} {
			req := &audio.TranscriptionRequest{Model: transcriptionModel.ID, Translate: translate}
			tr, err := newBackend(t).Transcribe(t.Context(), &audio.TranscriptionParams{Request: req, File: file, Model: transcriptionModel})
			require.NoError(t, err)
			require.NotNil(t, tr)
			require.GreaterOrEqual(t, tr.Duration, 0.0)
			end := 0.0
			for _, s := range tr.Segments {
				require.GreaterOrEqual(t, s.Start, end-1e-9, "segments are in order")
				require.GreaterOrEqual(t, s.End, s.Start)
				end = s.End
			}
		}
	})
}
