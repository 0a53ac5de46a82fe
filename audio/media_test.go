package audio_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

// typedSpeech is the demo's audio backend with speech of a type of its
// choosing, as a backend that passes on an upstream's reply would have.
type typedSpeech struct {
	*demo.AudioBackend
	contentType string
}

func (b typedSpeech) Speech(ctx context.Context, p *audio.SpeechParams) (*audio.Speech, error) {
	return &audio.Speech{ContentType: b.contentType, Audio: []byte(`<!doctype html><script>alert(document.domain)</script>`)}, nil
}

// TestSpeechIsNeverAPage: speech is sent as an audio type, or else as
// application/octet-stream for download; never sniffed, and sandboxed.
func TestSpeechIsNeverAPage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ declared, want, disposition string }{
		{"audio/mpeg", "audio/mpeg", ""},
		{"audio/wav", "audio/wav", ""},
		{"text/html; charset=utf-8", "application/octet-stream", "attachment"},
		{"image/svg+xml", "application/octet-stream", "attachment"},
		{"", "application/octet-stream", "attachment"}, // sniffed as text/html
	} {
		t.Run(tc.declared, func(t *testing.T) {
			t.Parallel()
			h := newMux(typedSpeech{demo.NewAudioBackend(), tc.declared})
			w := servedtest.PostJSON(h, "/v1/audio/speech", `{"model":"demo-tts","input":"hi","voice":"alloy"}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, tc.want, w.Header().Get("Content-Type"))
			require.Equal(t, tc.disposition, w.Header().Get("Content-Disposition"))
			require.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
			require.Equal(t, "sandbox", w.Header().Get("Content-Security-Policy"))
		})
	}
}
