package audio_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

const sample = "Hello there, gateway. This is the demo speaking!"

func speech(t *testing.T, h http.Handler, body string) []byte {
	t.Helper()
	w := servedtest.PostJSON(h, "/v1/audio/speech", body)
	require.Equal(t, 200, w.Code, w.Body.String())
	return w.Body.Bytes()
}

func TestSpeech(t *testing.T) {
	t.Parallel()
	h := newMux(demo.NewAudioBackend())
	wav := speech(t, h, `{"model":"demo-tts","input":"`+sample+`","voice":"alloy","response_format":"wav"}`)
	hd := readWAV(t, wav)
	require.Equal(t, uint16(1), hd.channels)
	require.Equal(t, uint16(16), hd.bits)
	require.Equal(t, uint32(demo.SpeechSampleRate), hd.rate)
	require.Equal(t, sample, hd.comment, "the text rides in the LIST/INFO chunk")
	require.Positive(t, hd.dataBytes)

	t.Run("TheDefaultFormatIsWAV", func(t *testing.T) {
		t.Parallel()
		w := servedtest.PostJSON(h, "/v1/audio/speech", `{"model":"demo-tts","input":"`+sample+`","voice":"alloy"}`)
		require.Equal(t, "audio/wav", w.Header().Get("Content-Type"))
		require.Equal(t, wav, w.Body.Bytes(), "deterministic")
	})
	t.Run("LengthFollowsTheText", func(t *testing.T) {
		t.Parallel()
		short := readWAV(t, speech(t, h, `{"model":"demo-tts","input":"Hi.","voice":"alloy"}`))
		long := readWAV(t, speech(t, h, `{"model":"demo-tts","input":"Hi. `+strings.Repeat("More words here. ", 10)+`","voice":"alloy"}`))
		require.Greater(t, long.dataBytes, 5*short.dataBytes)
	})
	t.Run("SpeedShortensIt", func(t *testing.T) {
		t.Parallel()
		fast := readWAV(t, speech(t, h, `{"model":"demo-tts","input":"`+sample+`","voice":"alloy","speed":2}`))
		require.InDelta(t, hd.dataBytes/2, fast.dataBytes, 4)
	})
	t.Run("VoicesDiffer", func(t *testing.T) {
		t.Parallel()
		other := speech(t, h, `{"model":"demo-tts","input":"`+sample+`","voice":{"id":"voice_123"}}`)
		require.Len(t, other, len(wav))
		require.NotEqual(t, wav, other)
	})
	t.Run("PCM", func(t *testing.T) {
		t.Parallel()
		w := servedtest.PostJSON(h, "/v1/audio/speech", `{"model":"demo-tts","input":"`+sample+`","voice":"alloy","response_format":"pcm"}`)
		require.Equal(t, 200, w.Code)
		require.Equal(t, "audio/pcm", w.Header().Get("Content-Type"))
		require.Equal(t, hd.dataBytes, w.Body.Len())
	})
}

func TestSpeechErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, param, msg string
		status                 int
		code                   string
	}{
		{"MissingModel", `{"input":"x","voice":"alloy"}`, "model", "model is required", 400, "invalid_request_error"},
		{"TranscriptionModel", `{"model":"demo-whisper","input":"x","voice":"alloy"}`, "model", `"audio-speech"`, 400, "invalid_request_error"},
		{"UnknownModel", `{"model":"tts-1","input":"x","voice":"alloy"}`, "model", "tts-1", 404, "model_not_found"},
		{"MissingInput", `{"model":"demo-tts","voice":"alloy"}`, "input", "input is required", 400, "invalid_request_error"},
		{"TooLong", `{"model":"demo-tts","voice":"alloy","input":"` + strings.Repeat("a", audio.MaxSpeechInput+1) + `"}`, "input", "4096", 400, "invalid_request_error"},
		{"MissingVoice", `{"model":"demo-tts","input":"x"}`, "voice", "voice is required", 400, "invalid_request_error"},
		{"BadVoice", `{"model":"demo-tts","input":"x","voice":7}`, "voice", "voice must be", 400, "invalid_request_error"},
		{"SlowSpeed", `{"model":"demo-tts","input":"x","voice":"alloy","speed":0.1}`, "speed", "between 0.25 and 4", 400, "invalid_request_error"},
		{"UnknownFormat", `{"model":"demo-tts","input":"x","voice":"alloy","response_format":"ogg"}`, "response_format", `"ogg"`, 400, "invalid_request_error"},
		{"MP3TheDemoCannotMake", `{"model":"demo-tts","input":"x","voice":"alloy","response_format":"mp3"}`, "response_format", "wav and pcm audio only", 400, "invalid_request_error"},
		{"SSE", `{"model":"demo-tts","input":"x","voice":"alloy","stream_format":"sse"}`, "stream_format", "not supported", 400, "invalid_request_error"},
	}
	h := newMux(demo.NewAudioBackend())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			servedtest.RequireError(t, servedtest.PostJSON(h, "/v1/audio/speech", tc.body), tc.status, tc.code, tc.param, tc.msg)
		})
	}
}

// demoWAV is the demo's speech of text.
func demoWAV(t *testing.T, text string) []byte {
	return speech(t, newMux(demo.NewAudioBackend()), `{"model":"demo-tts","input":"`+text+`","voice":"alloy"}`)
}

func TestTranscriptionGolden(t *testing.T) {
	t.Parallel()
	h := newMux(demo.NewAudioBackend())
	wav := demoWAV(t, sample)
	tests := []struct {
		name, path, ext string
		fields          []field
		ct              string
	}{
		{"json", "/v1/audio/transcriptions", "json", nil, "application/json"},
		{"text", "/v1/audio/transcriptions", "txt", []field{{"response_format", "text"}}, "text/plain; charset=utf-8"},
		{"srt", "/v1/audio/transcriptions", "srt", []field{{"response_format", "srt"}}, "text/plain; charset=utf-8"},
		{"vtt", "/v1/audio/transcriptions", "vtt", []field{{"response_format", "vtt"}}, "text/vtt; charset=utf-8"},
		{"verbose_json", "/v1/audio/transcriptions", "json", []field{{"response_format", "verbose_json"}, {"timestamp_granularities[]", "word"}, {"timestamp_granularities[]", "segment"}, {"language", "en"}}, "application/json"},
		{"translation_json", "/v1/audio/translations", "json", nil, "application/json"},
		{"translation_verbose_json", "/v1/audio/translations", "json", []field{{"response_format", "verbose_json"}}, "application/json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fields := append([]field{{"model", "demo-whisper"}}, tc.fields...)
			w := upload(t, h, tc.path, "speech.wav", wav, fields...)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, tc.ct, w.Header().Get("Content-Type"))
			path := filepath.Join("testdata", tc.name+".golden."+tc.ext)
			if tc.ext == "json" {
				servedtest.Golden(t, path, w.Body.Bytes())
				return
			}
			if *servedtest.Update {
				require.NoError(t, os.WriteFile(path, w.Body.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), w.Body.String())
		})
	}
}

func TestTranscriptionOfOtherFiles(t *testing.T) {
	t.Parallel()
	h := newMux(demo.NewAudioBackend())
	w := upload(t, h, "/v1/audio/transcriptions", "voice.mp3", []byte("ID3 not really an mp3"), field{"model", "demo-whisper"}, field{"response_format", "text"})
	require.Equal(t, 200, w.Code, w.Body.String())
	require.Equal(t, "The gatewaykit demo received \"voice.mp3\", 21 bytes of audio, and hears no words in it.\n", w.Body.String())
}

func TestTranscriptionErrors(t *testing.T) {
	t.Parallel()
	wav := demoWAV(t, "short")
	model := field{"model", "demo-whisper"}
	tests := []struct {
		name   string
		opts   []audio.Option
		file   []byte
		fields []field
		ct     string
		status int
		param  string
		msg    string
	}{
		{name: "MissingFile", fields: []field{model}, status: 400, param: "file", msg: "file is required"},
		{name: "EmptyFile", file: []byte{}, fields: []field{model}, status: 400, param: "file", msg: "file is empty"},
		{name: "MissingModel", file: wav, status: 400, param: "model", msg: "model is required"},
		{name: "SpeechModel", file: wav, fields: []field{{"model", "demo-tts"}}, status: 400, param: "model", msg: `"audio-transcription"`},
		{name: "BadFormat", file: wav, fields: []field{model, {"response_format", "diarized_json"}}, status: 400, param: "response_format", msg: `"diarized_json"`},
		{name: "BadTemperature", file: wav, fields: []field{model, {"temperature", "hot"}}, status: 400, param: "temperature", msg: `"hot"`},
		{name: "BadGranularity", file: wav, fields: []field{model, {"response_format", "verbose_json"}, {"timestamp_granularities[]", "char"}}, status: 400, param: "timestamp_granularities", msg: `"char"`},
		{name: "WordsWithoutVerbose", file: wav, fields: []field{model, {"timestamp_granularities[]", "word"}}, status: 400, param: "timestamp_granularities", msg: "verbose_json"},
		{name: "Stream", file: wav, fields: []field{model, {"stream", "true"}}, status: 400, param: "stream", msg: "not supported"},
		{name: "NotMultipart", ct: "application/json", status: 400, msg: "multipart/form-data"},
		{name: "TooLarge", opts: []audio.Option{endpoint.WithMaxRequestBytes(1024)}, file: make([]byte, 4096), fields: []field{model}, status: 400, msg: "1 KiB limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newMux(demo.NewAudioBackend(), tc.opts...)
			body, ct := form(t, "a.wav", tc.file, tc.fields...)
			if tc.ct != "" {
				ct = tc.ct
			}
			w := servedtest.Do(h, "POST", "/v1/audio/transcriptions", ct, body)
			servedtest.RequireError(t, w, tc.status, "invalid_request_error", tc.param, tc.msg)
		})
	}
}

// failing fails every call.
type failing struct{}

func (failing) Speech(context.Context, *audio.SpeechParams) (*audio.Speech, error) {
	return nil, errors.New("speaker broken")
}

func (failing) Transcribe(context.Context, *audio.TranscriptionParams) (*audio.Transcription, error) {
	return nil, errors.New("microphone broken")
}

func TestBackendFailuresAreHidden(t *testing.T) {
	t.Parallel()
	h := newMux(failing{})
	servedtest.RequireError(t, servedtest.PostJSON(h, "/v1/audio/speech", `{"model":"demo-tts","input":"x","voice":"alloy"}`), 500, "internal_server_error", "", "internal server error")
	servedtest.RequireError(t, upload(t, h, "/v1/audio/translations", "a.wav", []byte("x"), field{"model", "demo-whisper"}), 500, "internal_server_error", "", "internal server error")
}

func TestChargesTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, newMux(demo.NewAudioBackend()), auth.UnlimitedQuota())
	w := servedtest.PostJSON(h, "/v1/audio/speech", `{"model":"demo-tts","input":"one two three","voice":"alloy"}`)
	require.Equal(t, 200, w.Code)
	w = upload(t, h, "/v1/audio/transcriptions", "s.wav", w.Body.Bytes(), field{"model", "demo-whisper"})
	require.Equal(t, 200, w.Code, w.Body.String())
	var reply struct {
		Text  string
		Usage struct {
			Type                      string
			InputTokens, OutputTokens int `json:"-"`
		}
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &reply))
	require.Equal(t, "one two three", reply.Text)
	s := keys.Settled()
	require.Len(t, s, 2)
	require.Equal(t, demo.SpeechModel, s[0].Model)
	require.Equal(t, int64(3), s[0].InputTokens)
	require.Positive(t, s[0].OutputTokens)
	require.Equal(t, demo.TranscriptionModel, s[1].Model)
	require.Equal(t, int64(3), s[1].OutputTokens)
}

func TestNewHandlerPanicsOnNil(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "audio: NewHandler: nil Backend", func() { audio.NewHandler(catalog(), nil) })
}
