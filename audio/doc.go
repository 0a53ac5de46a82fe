// Package audio serves the audio access points of spec §4.4 over any
// [Backend]: POST /v1/audio/speech (text to speech), and POST
// /v1/audio/transcriptions and /v1/audio/translations (speech to text,
// from a multipart upload). The requests are decoded and checked here,
// the audio and the text come from the backend, and the handler writes
// every reply format.
//
//	audio.Register(mux, audio.NewHandler(catalog, backend))
//
// [Register] mounts the handler on a ServeMux; on any other router, mount
// the routes of [Routes] (see package route).
//
// # Speech
//
// A JSON body: model (required, a model whose supported_endpoint_types
// lists "audio-speech", [models.AudioSpeech]); input (required, at most
// [MaxSpeechInput] characters); voice (required: a name, or
// {"id":"voice_…"}); instructions; response_format (mp3, opus, aac, flac,
// wav or pcm); speed ([MinSpeed] to [MaxSpeed], 1 by default);
// stream_format ("audio", the default; "sse" is refused with a 400). The
// reply is the backend's audio as the body, with its Content-Type and
// Content-Length, X-Content-Type-Options: nosniff and
// Content-Security-Policy: sandbox; a type that is not audio (audio/mpeg,
// audio/opus, audio/ogg, audio/aac, audio/flac, audio/wav, audio/pcm and
// their common spellings) is sent as application/octet-stream with
// Content-Disposition: attachment, so that a backend's reply never runs
// as a page on the gateway's origin. When the request sets no response_format, the backend
// chooses (OpenAI's default is mp3; the demo's is wav), and the
// Content-Type says what it chose; a format the backend cannot produce is
// its 400.
//
// # Transcriptions and translations
//
// A multipart/form-data body: a file part named "file" (required, not
// empty) and the fields model (required, a model whose
// supported_endpoint_types lists "audio-transcription",
// [models.AudioTranscription]), language (transcriptions only), prompt,
// response_format, temperature (0 to 1) and timestamp_granularities[]
// ("word" and/or "segment"; "word" needs verbose_json). Other fields are
// ignored; stream=true is refused with a 400. The body limit is
// [DefaultMaxRequestBytes] (25 MiB) unless endpoint.WithMaxRequestBytes
// sets another; a larger upload is a 400 that names the limit. The reply,
// by response_format:
//
//	json (default)  {"text":"…","usage":{"type":"tokens","input_tokens":…,"output_tokens":…,"total_tokens":…}}
//	                (usage {"type":"duration","seconds":…} when the backend reports no tokens;
//	                translations send {"text":"…"} only)
//	text            the text and a newline, as text/plain
//	verbose_json    {"task":"transcribe"|"translate","language","duration","text",
//	                 "segments":[{"id","seek","start","end","text","tokens","temperature",
//	                 "avg_logprob","compression_ratio","no_speech_prob"}],
//	                 "words":[{"word","start","end"}] (with word timestamps), "usage"}
//	srt             numbered cues "00:00:01,810 --> 00:00:04,430", as text/plain
//	vtt             "WEBVTT" and cues "00:00:01.810 --> 00:00:04.430", as text/vtt
//
// The cues and segments are the backend's [Segment]s, or one segment of
// the whole text over the whole duration when it gives none.
//
// # Usage and quota
//
// Speech reserves the body's bytes / 4 tokens from the API key, and
// settles to the backend's [Usage] (recorded with the model), or to the
// input's bytes / 4 when it reports none. A transcription reserves an
// estimate from the file's size, and settles to the backend's Usage, or
// to the text's bytes / 4 as output tokens. A failed request is charged
// nothing.
//
// # Errors
//
// Every error is in the general shape. A backend error that is (or
// wraps) an *apierrors.Error is sent as it is; any other is a 500 whose
// cause is only logged, as is an empty speech.
//
// # Options
//
// [NewHandler] takes the options of package endpoint that mean something
// to it ([Option]): endpoint.WithLogger, WithMaxRequestBytes (25 MiB by
// default, see [DefaultMaxRequestBytes]), WithValidator, WithAllowed and
// WithErrorHook. endpoint.WithKeepAlive and WithClock do not compile here
// (the handler does not stream, and its replies carry no time), nor do the
// options of other packages.
package audio
