package demo

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/audio"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// SpeechSampleRate is the sample rate of the demo's speech: 24 kHz, 16-bit
// mono, as OpenAI's pcm format.
const SpeechSampleRate = 24000

// The speech layout at speed 1: each word is a tone of wordBase plus
// wordPerChar seconds per character, followed by a gap; a word that ends
// a sentence (. ! ? ; :) or a clause (,) is followed by a longer pause.
const (
	wordBase      = 0.12
	wordPerChar   = 0.06
	wordGap       = 0.08
	clausePause   = 0.15
	sentencePause = 0.3
	minSpeech     = 0.3
	amplitude     = 0.3 * math.MaxInt16
	fadeSeconds   = 0.005
)

// AudioBackend is the demo's audio.Backend: its speech is real WAV (or raw
// PCM) audio whose length follows the text, carrying the text in a RIFF
// LIST/INFO chunk, and its transcription reads that text back. Create it
// with [NewAudioBackend]; it is safe for concurrent use.
type AudioBackend struct{}

// NewAudioBackend returns the demo audio backend (see the package
// documentation, Audio).
func NewAudioBackend() *AudioBackend { return &AudioBackend{} }

// Speech speaks p's input: one tone per word, pitched by the voice and
// the word, as WAV (the default) or raw 16-bit PCM.
func (*AudioBackend) Speech(ctx context.Context, p *audio.SpeechParams) (*audio.Speech, error) {
	req := p.Request
	switch req.ResponseFormat {
	case "", audio.SpeechWAV, audio.SpeechPCM:
	default:
		return nil, apierrors.InvalidRequestf("response_format",
			"%s produces wav and pcm audio only, not %s: set response_format to wav or pcm", SpeechModel, apierrors.Quote(req.ResponseFormat))
	}
	samples := speak(req.Input, req.Voice.String(), req.SpeedOr1())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	usage := &audio.Usage{InputTokens: CountTokens(req.Input), OutputTokens: (len(samples) + SpeechSampleRate/20 - 1) / (SpeechSampleRate / 20)}
	if req.ResponseFormat == audio.SpeechPCM {
		return &audio.Speech{Audio: pcmBytes(samples), ContentType: "audio/pcm", Usage: usage}, nil
	}
	return &audio.Speech{Audio: WAV(samples, req.Input), ContentType: "audio/wav", Usage: usage}, nil
}

// speechWord is a word of the speech layout, with its place at speed 1.
type speechWord struct {
	text       string
	start, end float64
}

// layout places the words of text at speed 1, and returns them with the
// length of the whole speech.
func layout(text string) ([]speechWord, float64) {
	var ws []speechWord
	t := 0.0
	for _, f := range strings.Fields(text) {
		word := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		d := wordBase + wordPerChar*float64(utf8.RuneCountInString(f))
		ws = append(ws, speechWord{text: word, start: t, end: t + d})
		t += d + wordGap
		switch last, _ := utf8.DecodeLastRuneInString(f); last {
		case '.', '!', '?', ';', ':':
			t += sentencePause
		case ',':
			t += clausePause
		}
	}
	return ws, math.Max(t, minSpeech)
}

// voicePitch is the base frequency of a voice, in Hz: 140 to 300,
// derived from its name.
func voicePitch(voice string) float64 {
	return 140 + float64(hash64(strings.ToLower(voice))%161)
}

// speak returns the samples of text spoken by voice at speed.
func speak(text, voice string, speed float64) []int16 {
	ws, total := layout(text)
	n := int(math.Ceil(total / speed * SpeechSampleRate))
	out := make([]int16, n)
	base := voicePitch(voice)
	fade := fadeSeconds * SpeechSampleRate
	for _, w := range ws {
		freq := base * (1 + float64(hash64(strings.ToLower(w.text))%12)/24)
		from, to := int(w.start/speed*SpeechSampleRate), min(int(w.end/speed*SpeechSampleRate), n)
		for i := from; i < to; i++ {
			k := float64(i - from)
			env := math.Min(1, math.Min(k, float64(to-1-i))/fade)
			out[i] = int16(amplitude * env * math.Sin(2*math.Pi*freq*k/SpeechSampleRate))
		}
	}
	return out
}

func pcmBytes(samples []int16) []byte {
	b := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	return b
}

// WAV returns a RIFF/WAVE file of 16-bit mono samples at
// [SpeechSampleRate], with a LIST/INFO chunk whose ICMT (comment) holds
// text and whose ISFT (software) names the gatewaykit demo. The demo's
// transcription reads text back from it.
func WAV(samples []int16, text string) []byte {
	var info bytes.Buffer
	info.WriteString("INFO")
	sub := func(id, v string) {
		b := append([]byte(v), 0)
		info.WriteString(id)
		_ = binary.Write(&info, binary.LittleEndian, uint32(len(b)))
		info.Write(b)
		if len(b)%2 == 1 {
			info.WriteByte(0)
		}
	}
	sub("ISFT", "gatewaykit demo")
	sub("ICMT", text)
	data := pcmBytes(samples)
	var b bytes.Buffer
	le := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(4 + 8 + 16 + 8 + info.Len() + 8 + len(data)))
	b.WriteString("WAVE")
	b.WriteString("fmt ")
	le(uint32(16))
	le(uint16(1)) // PCM
	le(uint16(1)) // mono
	le(uint32(SpeechSampleRate))
	le(uint32(SpeechSampleRate * 2))
	le(uint16(2))
	le(uint16(16))
	b.WriteString("LIST")
	le(uint32(info.Len()))
	b.Write(info.Bytes())
	b.WriteString("data")
	le(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

// wavInfo is what the demo reads of a WAV file: its duration, and the
// text of its ICMT chunk.
type wavInfo struct {
	duration float64
	comment  string
	ok       bool
}

// readWAV reads the chunks of a RIFF/WAVE file; ok is false for anything
// else.
func readWAV(b []byte) wavInfo {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return wavInfo{}
	}
	var w wavInfo
	var byteRate uint32
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : min(p+8+size, len(b))]
		switch {
		case id == "fmt " && len(body) >= 16:
			byteRate = binary.LittleEndian.Uint32(body[8:])
		case id == "data" && byteRate > 0:
			w.duration, w.ok = float64(len(body))/float64(byteRate), true
		case id == "LIST" && len(body) >= 4 && string(body[:4]) == "INFO":
			for q := 4; q+8 <= len(body); {
				sid, ssize := string(body[q:q+4]), int(binary.LittleEndian.Uint32(body[q+4:]))
				v := body[q+8 : min(q+8+ssize, len(body))]
				if sid == "ICMT" {
					w.comment = strings.TrimRight(string(v), "\x00")
				}
				q += 8 + ssize + ssize%2
			}
		}
		p += 8 + size + size%2
	}
	return w
}

// Transcribe reads the text back from a WAV file of the demo's speech
// (its ICMT chunk), timed as the speech placed its words; any other file
// gets a description of itself. Translations give the same text: the
// demo's speech is English.
func (*AudioBackend) Transcribe(ctx context.Context, p *audio.TranscriptionParams) (*audio.Transcription, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := p.File
	w := readWAV(f.Data)
	text := w.comment
	if text == "" {
		text = describeFile(f, w)
	}
	if !w.ok {
		w.duration = float64(len(f.Data)) / 16000 // as if 128 kbit/s
	}
	tr := &audio.Transcription{Text: text, Language: "english", Duration: w.duration}
	ws, total := layout(text)
	fields := strings.Fields(text)
	scale := w.duration / total
	seg := audio.Segment{Start: 0}
	var segText []string
	for i, word := range ws {
		if word.text != "" {
			tr.Words = append(tr.Words, audio.Word{Word: word.text, Start: word.start * scale, End: word.end * scale})
		}
		segText = append(segText, fields[i])
		if last, _ := utf8.DecodeLastRuneInString(segText[len(segText)-1]); strings.ContainsRune(".!?", last) || i == len(ws)-1 {
			seg.End, seg.Text = word.end*scale, " "+strings.Join(segText, " ")
			tr.Segments = append(tr.Segments, seg)
			segText, seg = nil, audio.Segment{Start: word.end * scale}
		}
	}
	if !p.Request.Translate && p.Request.Language != "" {
		tr.Language = p.Request.Language
	}
	tr.Usage = &audio.Usage{InputTokens: int(math.Ceil(w.duration * 10)), OutputTokens: CountTokens(text)}
	return tr, nil
}

// describeFile is the demo's transcription of a file that carries no text.
func describeFile(f *audio.File, w wavInfo) string {
	name := f.Name
	if name == "" {
		name = "(no name)"
	}
	kind := f.ContentType
	if kind == "" || kind == "application/octet-stream" {
		kind = "audio"
	}
	s := "The gatewaykit demo received " + strconv.Quote(name) + ", " + strconv.Itoa(len(f.Data)) + " bytes of " + kind
	if w.ok {
		s += ", a WAV file of " + strconv.FormatFloat(w.duration, 'f', 2, 64) + " seconds"
	}
	return s + ", and hears no words in it."
}
