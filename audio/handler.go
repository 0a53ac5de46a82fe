package audio

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/mediareply"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes served by [NewHandler], in [http.ServeMux] syntax. [Register]
// mounts them all.
const (
	PatternSpeech         = "POST /v1/audio/speech"
	PatternTranscriptions = "POST /v1/audio/transcriptions" // multipart/form-data
	PatternTranslations   = "POST /v1/audio/translations"   // multipart/form-data
)

// DefaultMaxRequestBytes is the body limit of the handler unless
// endpoint.WithMaxRequestBytes sets another: 25 MiB, the size of the
// largest file that OpenAI's API transcribes, and room for any speech
// request. (endpoint.WithMaxRequestBytes with n ≤ 0 restores the text
// endpoints' 8 MiB.)
const DefaultMaxRequestBytes int64 = 25 << 20

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option] or [endpoint.ValidatorOption] (see the table of
// its Options: the handler does not stream, and its replies carry no
// time). An option of another package, such as responses.WithStore, does
// not compile here.
type Option interface {
	// ApplyToAudio applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToAudio(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}}

type handler struct {
	speech, transcription served.Endpoint
	backend               Backend
}

// NewHandler returns the handler of the audio access points: POST
// /v1/audio/speech (text to speech, endpoint type [models.AudioSpeech])
// and POST /v1/audio/transcriptions and /v1/audio/translations (speech to
// text from a multipart upload, endpoint type
// [models.AudioTranscription]). It finds the access point from the end of
// the request's path. Each request is decoded and validated, its model
// checked against catalog, its estimate reserved from the API key, and
// the reservation settled to the backend's usage. See the package
// documentation for the formats.
//
//	audio.Register(mux, audio.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if backend == nil {
		panic("audio: NewHandler: nil Backend")
	}
	c := pipeline.Defaults()
	c.MaxBytes = DefaultMaxRequestBytes
	pipeline.Apply(&c, opts, Option.ApplyToAudio)
	return &handler{backend: backend,
		speech:        served.New("audio", catalog, models.AudioSpeech, c),
		transcription: served.New("audio", catalog, models.AudioTranscription, c)}
}

// Routes returns the routes of h, made by [NewHandler]: [PatternSpeech],
// [PatternTranscriptions] and [PatternTranslations], as [route.Route]
// values that any router can mount.
func Routes(h http.Handler) []route.Route {
	return route.List(h, PatternSpeech, PatternTranscriptions, PatternTranslations)
}

// Register mounts h, made by [NewHandler], on mux under [PatternSpeech],
// [PatternTranscriptions] and [PatternTranslations], the routes of
// [Routes]. Like mux.Handle, it panics if a pattern is taken.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	ep := &h.transcription
	switch p := r.URL.Path; {
	case r.Method != http.MethodPost:
		err = apierrors.MethodNotAllowed(r.Method, p, []string{http.MethodPost})
	case strings.HasSuffix(p, "/audio/speech"):
		ep = &h.speech
		telemetry.SetRoute(r.Context(), PatternSpeech)
		err = h.serveSpeech(w, r)
	case strings.HasSuffix(p, "/audio/transcriptions"):
		telemetry.SetRoute(r.Context(), PatternTranscriptions)
		err = h.serveTranscription(w, r, false)
	case strings.HasSuffix(p, "/audio/translations"):
		telemetry.SetRoute(r.Context(), PatternTranslations)
		err = h.serveTranscription(w, r, true)
	default:
		err = apierrors.NotFound("No audio access point at " + p + ".")
	}
	if err != nil {
		ep.Fail(w, r, err)
	}
}

func (h *handler) serveSpeech(w http.ResponseWriter, r *http.Request) error {
	req, body, err := served.DecodeRequest(&h.speech, w, r, ValidateSpeech)
	if err != nil {
		return err
	}
	return h.speech.Call(r.Context(), req, req.Model, served.Tokens(len(body)), func(m *models.Model) (in, out int64, err error) {
		sp, err := h.backend.Speech(r.Context(), &SpeechParams{Request: req, Model: m})
		switch {
		case err != nil:
			return 0, 0, served.BackendError("audio", err)
		case sp == nil || len(sp.Audio) == 0:
			return 0, 0, apierrors.Internal(errors.New("audio: backend returned no speech and no error"))
		}
		mediareply.Audio.Write(w, sp.ContentType, sp.Audio, false)
		if sp.Usage != nil {
			return int64(max(sp.Usage.InputTokens, 0)), int64(max(sp.Usage.OutputTokens, 0)), nil
		}
		return served.Tokens(len(req.Input)), 0, nil
	})
}

// ValidateSpeech checks a decoded speech request as the handler does,
// with the errors it sends (400 invalid_request_error naming the field).
func ValidateSpeech(req *SpeechRequest) error {
	switch {
	case req.Input == "":
		return apierrors.InvalidRequest("input", "input is required")
	case utf8.RuneCountInString(req.Input) > MaxSpeechInput:
		return apierrors.InvalidRequestf("input", "input must be at most %d characters", MaxSpeechInput)
	case req.Voice.String() == "":
		return apierrors.InvalidRequest("voice", "voice is required")
	case req.Speed != nil && !(*req.Speed >= MinSpeed && *req.Speed <= MaxSpeed):
		return apierrors.InvalidRequestf("speed", "speed must be between %g and %g, got %g", MinSpeed, MaxSpeed, *req.Speed)
	}
	switch req.ResponseFormat {
	case "", SpeechMP3, SpeechOpus, SpeechAAC, SpeechFLAC, SpeechWAV, SpeechPCM:
	default:
		return apierrors.InvalidRequestf("response_format", "response_format must be one of mp3, opus, aac, flac, wav and pcm, got %s", apierrors.Quote(req.ResponseFormat))
	}
	switch req.StreamFormat {
	case "", "audio":
	case "sse":
		return apierrors.InvalidRequest("stream_format", `stream_format "sse" is not supported here; use "audio" (the default): the audio is sent as the response body`)
	default:
		return apierrors.InvalidRequestf("stream_format", `stream_format must be "audio" or "sse", got %s`, apierrors.Quote(req.StreamFormat))
	}
	return nil
}
