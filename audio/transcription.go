package audio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
)

// The bounds of a multipart form besides the body limit.
const (
	maxFields     = 64
	maxFieldBytes = 64 << 10
)

func (h *handler) serveTranscription(w http.ResponseWriter, r *http.Request, translate bool) error {
	req, file, err := DecodeTranscription(w, r, h.transcription.Cfg.MaxBytes, translate)
	if err == nil {
		err = h.transcription.Validate(req)
	}
	if err != nil {
		return err
	}
	est := served.Tokens(len(file.Data)/32 + len(req.Prompt))
	return h.transcription.Call(r.Context(), req, req.Model, est, func(m *models.Model) (in, out int64, err error) {
		tr, err := h.backend.Transcribe(r.Context(), &TranscriptionParams{Request: req, File: file, Model: m})
		switch {
		case err != nil:
			return 0, 0, served.BackendError("audio", err)
		case tr == nil:
			return 0, 0, apierrors.Internal(errors.New("audio: backend returned no transcription and no error"))
		}
		ct, body, err := Render(req, tr)
		if err != nil {
			return 0, 0, apierrors.Internal(err)
		}
		hd := w.Header()
		hd.Set("Content-Type", ct)
		hd.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
		if tr.Usage != nil {
			return int64(max(tr.Usage.InputTokens, 0)), int64(max(tr.Usage.OutputTokens, 0)), nil
		}
		return 0, served.Tokens(len(tr.Text)), nil
	})
}

// DecodeTranscription reads the multipart/form-data body of a
// transcription (or, if translate, a translation) request, at most
// maxBytes of it, and checks it: a file part named "file" (required, not
// empty) and the fields model (required), language (transcriptions
// only), prompt, response_format, temperature and
// timestamp_granularities[] (also without the brackets). Other fields are
// ignored, but "stream": "true" is refused. Every failure is a 400
// invalid_request_error that says what is wrong.
func DecodeTranscription(w http.ResponseWriter, r *http.Request, maxBytes int64, translate bool) (*TranscriptionRequest, *File, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, nil, apierrors.InvalidRequestf("", "Content-Type must be multipart/form-data with a boundary, got %s", apierrors.Quote(r.Header.Get("Content-Type")))
	}
	if r.ContentLength > maxBytes {
		return nil, nil, httpjson.TooLarge(maxBytes)
	}
	body := http.MaxBytesReader(w, r.Body, maxBytes)
	req, file, err := decodeForm(multipart.NewReader(body, params["boundary"]), translate)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, nil, httpjson.TooLarge(maxBytes)
		}
		return nil, nil, err
	}
	return req, file, nil
}

func decodeForm(mr *multipart.Reader, translate bool) (*TranscriptionRequest, *File, error) {
	req := &TranscriptionRequest{Translate: translate}
	var file *File
	for n := 0; ; n++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, formError(err)
		}
		if n >= maxFields {
			return nil, nil, apierrors.InvalidRequestf("", "the multipart form has more than %d parts", maxFields)
		}
		name := part.FormName()
		if name == "file" {
			if file != nil {
				return nil, nil, apierrors.InvalidRequest("file", "the form has more than one file part")
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return nil, nil, formError(err)
			}
			file = &File{Name: part.FileName(), ContentType: part.Header.Get("Content-Type"), Data: data}
			continue
		}
		v, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
		if err != nil {
			return nil, nil, formError(err)
		}
		if len(v) > maxFieldBytes {
			return nil, nil, apierrors.InvalidRequestf(name, "the form field %s is longer than %d bytes", apierrors.Quote(name), maxFieldBytes)
		}
		if err := req.set(name, string(v)); err != nil {
			return nil, nil, err
		}
	}
	if err := validateTranscription(req, file); err != nil {
		return nil, nil, err
	}
	return req, file, nil
}

// set sets the field name of the form to v.
func (req *TranscriptionRequest) set(name, v string) error {
	switch name {
	case "model":
		req.Model = v
	case "language":
		if !req.Translate {
			req.Language = v
		}
	case "prompt":
		req.Prompt = v
	case "response_format":
		req.ResponseFormat = v
	case "temperature":
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || !(t >= 0 && t <= 1) {
			return apierrors.InvalidRequestf("temperature", "temperature must be a number between 0 and 1, got %s", apierrors.Quote(v))
		}
		req.Temperature = &t
	case "timestamp_granularities[]", "timestamp_granularities":
		if v != "word" && v != "segment" {
			return apierrors.InvalidRequestf("timestamp_granularities", `timestamp_granularities must hold "word" or "segment", got %s`, apierrors.Quote(v))
		}
		if !slices.Contains(req.TimestampGranularities, v) {
			req.TimestampGranularities = append(req.TimestampGranularities, v)
		}
	case "stream":
		if b, _ := strconv.ParseBool(v); b {
			return apierrors.InvalidRequest("stream", "streamed transcriptions are not supported here; leave stream out or false")
		}
	}
	return nil
}

func validateTranscription(req *TranscriptionRequest, file *File) error {
	switch {
	case file == nil:
		return apierrors.InvalidRequest("file", "file is required: the audio file, as a multipart part named file")
	case len(file.Data) == 0:
		return apierrors.InvalidRequest("file", "file is empty")
	case req.Model == "":
		return apierrors.InvalidRequest("model", "model is required")
	}
	switch req.ResponseFormat {
	case "", FormatJSON, FormatText, FormatVerboseJSON, FormatSRT, FormatVTT:
	default:
		return apierrors.InvalidRequestf("response_format", "response_format must be one of json, text, verbose_json, srt and vtt, got %s", apierrors.Quote(req.ResponseFormat))
	}
	if slices.Contains(req.TimestampGranularities, "word") && req.ResponseFormat != FormatVerboseJSON {
		return apierrors.InvalidRequest("timestamp_granularities", "timestamp_granularities needs response_format verbose_json")
	}
	return nil
}

func formError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) || apierrors.Has(err) {
		return err
	}
	return apierrors.InvalidRequest("", "the multipart form could not be read: "+err.Error()).WithCause(err)
}

// Render returns the media type and the body of the reply to req of tr,
// in req's response format.
func Render(req *TranscriptionRequest, tr *Transcription) (contentType string, body []byte, err error) {
	segs := tr.Segments
	if len(segs) == 0 {
		segs = []Segment{{Start: 0, End: math.Max(tr.Duration, 0), Text: tr.Text}}
	}
	switch req.ResponseFormat {
	case FormatText:
		return "text/plain; charset=utf-8", []byte(tr.Text + "\n"), nil
	case FormatSRT:
		var b bytes.Buffer
		for i, s := range segs {
			fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", i+1, timestamp(s.Start, ','), timestamp(s.End, ','), strings.TrimSpace(s.Text))
		}
		return "text/plain; charset=utf-8", b.Bytes(), nil
	case FormatVTT:
		var b bytes.Buffer
		b.WriteString("WEBVTT\n\n")
		for _, s := range segs {
			fmt.Fprintf(&b, "%s --> %s\n%s\n\n", timestamp(s.Start, '.'), timestamp(s.End, '.'), strings.TrimSpace(s.Text))
		}
		return "text/vtt; charset=utf-8", b.Bytes(), nil
	case FormatVerboseJSON:
		body, err := json.Marshal(verbose(req, tr, segs))
		return "application/json", body, err
	}
	reply := struct {
		Text  string `json:"text"`
		Usage any    `json:"usage,omitempty"`
	}{Text: tr.Text}
	if !req.Translate {
		reply.Usage = usageOf(tr)
	}
	body, err = json.Marshal(reply)
	return "application/json", body, err
}

// tokenUsage and durationUsage are the two forms of a transcription's
// usage.
type tokenUsage struct {
	Type         string `json:"type"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	TotalTokens  int    `json:"total_tokens"`
}

type durationUsage struct {
	Type    string  `json:"type"`
	Seconds float64 `json:"seconds"`
}

func usageOf(tr *Transcription) any {
	if u := tr.Usage; u != nil {
		in, out := max(u.InputTokens, 0), max(u.OutputTokens, 0)
		return tokenUsage{Type: "tokens", InputTokens: in, OutputTokens: out, TotalTokens: in + out}
	}
	return durationUsage{Type: "duration", Seconds: math.Ceil(math.Max(tr.Duration, 0))}
}

type verboseSegment struct {
	ID               int     `json:"id"`
	Seek             int     `json:"seek"`
	Start            float64 `json:"start"`
	End              float64 `json:"end"`
	Text             string  `json:"text"`
	Tokens           []int   `json:"tokens"`
	Temperature      float64 `json:"temperature"`
	AvgLogprob       float64 `json:"avg_logprob"`
	CompressionRatio float64 `json:"compression_ratio"`
	NoSpeechProb     float64 `json:"no_speech_prob"`
}

type verboseWord struct {
	Word  string  `json:"word"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

type verboseReply struct {
	Task     string           `json:"task"`
	Language string           `json:"language"`
	Duration float64          `json:"duration"`
	Text     string           `json:"text"`
	Segments []verboseSegment `json:"segments,omitempty"`
	Words    []verboseWord    `json:"words,omitempty"`
	Usage    any              `json:"usage,omitempty"`
}

func verbose(req *TranscriptionRequest, tr *Transcription, segs []Segment) verboseReply {
	v := verboseReply{Task: "transcribe", Language: tr.Language, Duration: round3(tr.Duration), Text: tr.Text}
	if req.Translate {
		v.Task = "translate"
	}
	if v.Language == "" {
		v.Language = "english"
		if !req.Translate && req.Language != "" {
			v.Language = req.Language
		}
	}
	g := req.TimestampGranularities
	if len(g) == 0 || slices.Contains(g, "segment") {
		v.Segments = make([]verboseSegment, len(segs))
		temp := 0.0
		if req.Temperature != nil {
			temp = *req.Temperature
		}
		for i, s := range segs {
			v.Segments[i] = verboseSegment{ID: i, Start: round3(s.Start), End: round3(s.End), Text: s.Text,
				Tokens: []int{}, Temperature: temp, CompressionRatio: 1}
		}
	}
	if slices.Contains(g, "word") {
		v.Words = make([]verboseWord, len(tr.Words))
		for i, w := range tr.Words {
			v.Words[i] = verboseWord{Word: w.Word, Start: round3(w.Start), End: round3(w.End)}
		}
	}
	if !req.Translate {
		v.Usage = usageOf(tr)
	}
	return v
}

func round3(x float64) float64 { return math.Round(math.Max(x, 0)*1000) / 1000 }

// timestamp formats seconds as hh:mm:ss<sep>mmm (SRT uses a comma, WebVTT
// a full stop).
func timestamp(sec float64, sep byte) string {
	ms := int64(math.Round(math.Max(sec, 0) * 1000))
	return fmt.Sprintf("%02d:%02d:%02d%c%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}
