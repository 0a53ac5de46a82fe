package audio

import (
	"bytes"
	"context"
	"encoding/json"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

// A Backend speaks text and transcribes speech. The handler owns the wire
// (the request forms, the reply formats json, text, verbose_json, srt and
// vtt); a Backend only says what the model produced.
//
// Speech returns the audio of a text to speech request. Transcribe
// returns the text of an uploaded audio file, in its language
// (POST /v1/audio/transcriptions) or in English (POST
// /v1/audio/translations, p.Request.Translate). The handler asks Speech
// only for models of endpoint type [models.AudioSpeech], and Transcribe
// only for models of [models.AudioTranscription], so a backend that does
// one of the two serves models of that type only, and may answer the
// other with an error.
//
// The context is the request's: it is cancelled when the client goes
// away, and the methods should then return promptly. To send a
// client-facing error (a response_format the model cannot produce, a file
// it cannot read), return or wrap an *apierrors.Error; any other error is
// answered as a 500 whose text is only logged. Backends must be safe for
// concurrent use and must not modify their params.
type Backend interface {
	Speech(ctx context.Context, p *SpeechParams) (*Speech, error)
	Transcribe(ctx context.Context, p *TranscriptionParams) (*Transcription, error)
}

// The response formats of speech (response_format of POST
// /v1/audio/speech).
const (
	SpeechMP3  = "mp3"
	SpeechOpus = "opus"
	SpeechAAC  = "aac"
	SpeechFLAC = "flac"
	SpeechWAV  = "wav"
	SpeechPCM  = "pcm"
)

// The limits of a speech request, as in OpenAI's API.
const (
	MaxSpeechInput = 4096 // characters
	MinSpeed       = 0.25
	MaxSpeed       = 4.0
)

// SpeechRequest is the body of POST /v1/audio/speech.
type SpeechRequest struct {
	// Model is the model id (required).
	Model string `json:"model"`
	// Input is the text to speak (required, at most MaxSpeechInput
	// characters).
	Input string `json:"input"`
	// Voice is the voice (required): a name, or a custom voice's id.
	Voice Voice `json:"voice"`
	// Instructions tell the model how to speak.
	Instructions string `json:"instructions,omitempty"`
	// ResponseFormat is one of the Speech* formats; empty means the
	// backend's default (whose media type the reply says).
	ResponseFormat string `json:"response_format,omitempty"`
	// Speed is the speed of the speech, MinSpeed to MaxSpeed; nil means 1.
	Speed *float64 `json:"speed,omitempty"`
	// StreamFormat is "audio" or empty: the handler sends the audio as
	// the response body ("sse" is refused).
	StreamFormat string `json:"stream_format,omitempty"`
}

// SpeedOr1 returns Speed, or 1 when it is not set.
func (r *SpeechRequest) SpeedOr1() float64 {
	if r.Speed == nil {
		return 1
	}
	return *r.Speed
}

// Voice is the voice of a speech request: a name ("alloy"), sent as a
// string, or the id of a custom voice, sent as {"id":"voice_…"}.
type Voice struct {
	Name string
	ID   string
}

// String returns the name, or the id.
func (v Voice) String() string {
	if v.ID != "" {
		return v.ID
	}
	return v.Name
}

// UnmarshalJSON accepts a string or an object with an id.
func (v *Voice) UnmarshalJSON(b []byte) error {
	*v = Voice{}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return apierrors.InvalidRequest("voice", `voice must be a string or {"id": "…"}`).WithCause(err)
		}
		v.ID = o.ID
		return nil
	}
	if err := json.Unmarshal(b, &v.Name); err != nil {
		return apierrors.InvalidRequest("voice", `voice must be a string or {"id": "…"}`).WithCause(err)
	}
	return nil
}

// MarshalJSON writes the form that v was read from.
func (v Voice) MarshalJSON() ([]byte, error) {
	if v.ID != "" {
		return json.Marshal(map[string]string{"id": v.ID})
	}
	return json.Marshal(v.Name)
}

// SpeechParams is what [Backend.Speech] is asked: the decoded and
// validated request, and the catalogue entry of its model. Read them, do
// not modify them.
type SpeechParams struct {
	Request *SpeechRequest
	Model   *models.Model
}

// Speech is a backend's spoken audio.
type Speech struct {
	// Audio is the audio file, sent as the response body.
	Audio []byte
	// ContentType is Audio's media type ("audio/wav"), sent as the
	// reply's Content-Type; empty means it is sniffed.
	ContentType string
	// Usage is the tokens charged to the API key; nil charges the input's
	// bytes / 4.
	Usage *Usage
}

// Usage is the tokens of an audio request.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// The response formats of transcriptions and translations.
const (
	FormatJSON        = "json"
	FormatText        = "text"
	FormatVerboseJSON = "verbose_json"
	FormatSRT         = "srt"
	FormatVTT         = "vtt"
)

// TranscriptionRequest is the form of POST /v1/audio/transcriptions and
// /v1/audio/translations, but its file.
type TranscriptionRequest struct {
	// Model is the model id (required).
	Model string
	// Translate is true for a translation (into English).
	Translate bool
	// Language is the audio's language (ISO-639-1), if the client knows
	// it; transcriptions only.
	Language string
	// Prompt guides the model's style.
	Prompt string
	// ResponseFormat is one of the Format* values; empty means json.
	ResponseFormat string
	// Temperature is the sampling temperature, 0 to 1; nil means the
	// model's default.
	Temperature *float64
	// TimestampGranularities lists "word" and/or "segment", for
	// verbose_json; empty means segment.
	TimestampGranularities []string
}

// File is an uploaded audio file.
type File struct {
	// Name is the file name that the client gave.
	Name string
	// ContentType is the media type that the client gave, if any.
	ContentType string
	// Data is the file.
	Data []byte
}

// TranscriptionParams is what [Backend.Transcribe] is asked: the decoded
// and validated request, its file, and the catalogue entry of its model.
// Read them, do not modify them.
type TranscriptionParams struct {
	Request *TranscriptionRequest
	File    *File
	Model   *models.Model
}

// Transcription is a backend's text of an audio file.
type Transcription struct {
	// Text is the whole text (required).
	Text string
	// Language is the language of the text, as a lower-case English name
	// ("english"), sent in verbose_json; empty means "english" for a
	// translation, and the request's language or "english" otherwise.
	Language string
	// Duration is the audio's length in seconds.
	Duration float64
	// Segments are the timed parts of Text, in order, for verbose_json,
	// srt and vtt; none means one segment, the whole text over the whole
	// duration.
	Segments []Segment
	// Words are the timed words of Text, sent in verbose_json when the
	// request asks for word timestamps.
	Words []Word
	// Usage is the tokens charged to the API key, and sent in json
	// replies as token usage; nil sends the duration as usage and charges
	// the text's bytes / 4.
	Usage *Usage
}

// Segment is a timed part of a transcription.
type Segment struct {
	Start, End float64 // seconds
	Text       string
}

// Word is a timed word of a transcription.
type Word struct {
	Word       string
	Start, End float64 // seconds
}
