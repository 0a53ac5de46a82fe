package audio_test

import (
	"encoding/json"
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

// checkReply fails unless w is a 200 or an error in the general shape.
func checkReply(t *testing.T, code int, ct string, body []byte) {
	switch code {
	case 200:
		if len(body) == 0 || ct == "" {
			t.Fatalf("empty 200")
		}
	case 400, 404:
		var e servedtest.ErrorBody
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code == "" {
			t.Fatalf("%d with %s", code, body)
		}
	default:
		t.Fatalf("status %d: %s", code, body)
	}
}

// FuzzSpeech sends arbitrary JSON bodies to the speech decoder and the
// demo backend (inputs kept short, so that the fuzzer is after the
// decoder).
func FuzzSpeech(f *testing.F) {
	for _, s := range []string{
		`{"model":"demo-tts","input":"hi","voice":"alloy"}`,
		`{"model":"demo-tts","input":"hi","voice":{"id":"v"},"speed":4,"response_format":"pcm"}`,
		`{"model":"demo-tts","input":"","voice":null,"speed":-1}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	h := newMux(demo.NewAudioBackend())
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 512 {
			return
		}
		w := servedtest.Do(h, "POST", "/v1/audio/speech", "application/json", body)
		checkReply(t, w.Code, w.Header().Get("Content-Type"), w.Body.Bytes())
	})
}

// FuzzTranscription sends arbitrary multipart bodies (under a fixed
// boundary) to the transcription decoder, and arbitrary files (a demo WAV
// to start from) to the demo's WAV reader: never a panic, always a reply
// or an error in the general shape.
func FuzzTranscription(f *testing.F) {
	wav := demo.WAV([]int16{0, 1, 2, 3}, "Hi there.")
	ok, _ := form(f, "a.wav", wav, field{"model", "demo-whisper"}, field{"response_format", "verbose_json"})
	f.Add(ok, wav)
	f.Add([]byte("--b\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ndemo-whisper\r\n--b--\r\n"), []byte("RIFF\xff\xff\xff\xffWAVE"))
	h := newMux(demo.NewAudioBackend())
	f.Fuzz(func(t *testing.T, body, file []byte) {
		w := servedtest.Do(h, "POST", "/v1/audio/transcriptions", "multipart/form-data; boundary=b", body)
		checkReply(t, w.Code, w.Header().Get("Content-Type"), w.Body.Bytes())

		for _, format := range []string{"srt", "verbose_json"} {
			b, ct := form(t, "f.wav", file, field{"model", "demo-whisper"}, field{"response_format", format})
			w = servedtest.Do(h, "POST", "/v1/audio/translations", ct, b)
			checkReply(t, w.Code, w.Header().Get("Content-Type"), w.Body.Bytes())
		}
	})
}
