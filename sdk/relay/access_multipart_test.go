package relay_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"
)

func TestMultipartFileFirstWithTheOfficialSDK(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"text":"hello from upstream"}`)
	})
	g := newAccessGateway(t, up)
	client := openai.NewClient(option.WithBaseURL(g.srv.URL+"/v1/"), option.WithAPIKey(keyOK), option.WithMaxRetries(0))

	// Larger than the in-memory spool: the SDK sends the file before the
	// model, so the gateway spools it to a temporary file.
	file := audio(1<<20 + 123)
	for _, translate := range []bool{false, true} {
		var text string
		if translate {
			res, err := client.Audio.Translations.New(context.Background(), openai.AudioTranslationNewParams{
				File: openai.File(bytes.NewReader(file), "clip.mp3", "audio/mpeg"), Model: "whisper-1",
			})
			require.NoError(t, err)
			text = res.Text
		} else {
			res, err := client.Audio.Transcriptions.New(context.Background(), openai.AudioTranscriptionNewParams{
				File: openai.File(bytes.NewReader(file), "clip.mp3", "audio/mpeg"), Model: "whisper-1",
				Language: openai.String("en"),
			})
			require.NoError(t, err)
			text = res.Text
		}
		require.Equal(t, "hello from upstream", text)

		c := up.lastCall(t)
		wantPath := "/v1/audio/transcriptions"
		if translate {
			wantPath = "/v1/audio/translations"
		}
		require.Equal(t, wantPath, c.Path)
		require.Equal(t, "Bearer "+upKey, c.Header.Get("Authorization"))
		noClientKey(t, c)
		parts := parseParts(t, c.Header.Get("Content-Type"), c.Body)
		byName := map[string]receivedPart{}
		var order []string
		for _, p := range parts {
			byName[p.Name] = p
			order = append(order, p.Name)
		}
		require.Equal(t, "up-whisper-1", string(byName["model"].Data), "the model field is renamed")
		require.Equal(t, "clip.mp3", byName["file"].FileName)
		require.Equal(t, "audio/mpeg", byName["file"].ContentType)
		require.Equal(t, sha256.Sum256(file), sha256.Sum256(byName["file"].Data), "the file arrives whole")
		if !translate {
			require.Equal(t, "en", string(byName["language"].Data))
			require.Equal(t, []string{"file", "language", "model"}, order, "the parts keep the client's order")
		}
	}
}
