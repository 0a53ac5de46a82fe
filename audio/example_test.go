package audio_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/models"
)

// ExampleNewHandler speaks a text with the demo backend, and transcribes
// the WAV file back to text, as subtitles.
func ExampleNewHandler() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	audio.Register(mux, audio.NewHandler(catalog, demo.NewAudioBackend()))

	speech := httptest.NewRecorder()
	mux.ServeHTTP(speech, httptest.NewRequest("POST", "/v1/audio/speech", strings.NewReader(
		`{"model":"demo-tts","input":"Hello there. Goodbye!","voice":"alloy","response_format":"wav"}`)))
	fmt.Println(speech.Code, speech.Header().Get("Content-Type"))

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "speech.wav")
	_, _ = fw.Write(speech.Body.Bytes())
	_ = mw.WriteField("model", "demo-whisper")
	_ = mw.WriteField("response_format", "vtt")
	_ = mw.Close()
	req := httptest.NewRequest("POST", "/v1/audio/transcriptions", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	text := httptest.NewRecorder()
	mux.ServeHTTP(text, req)
	fmt.Print(text.Body)
	// Output:
	// 200 audio/wav
	// WEBVTT
	//
	// 00:00:00.000 --> 00:00:00.980
	// Hello there.
	//
	// 00:00:00.980 --> 00:00:01.960
	// Goodbye!
}
