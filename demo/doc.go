// Package demo is gatewaykit's deterministic demo backend: the embedded
// default of the example server and the fixture of tests. Its replies
// derive from the input only, so a test can predict them exactly; nothing
// is random, and nothing is called over the network.
//
// # Text
//
// [NewTextBackend] returns a [TextBackend], which serves chat completions
// through [TextBackend.Chat] (a chat.StreamingBackend) and legacy
// completions through [TextBackend.Completions] (a
// completions.StreamingBackend), and responses through
// [TextBackend.Responses] (see Responses below):
//
//	text := demo.NewTextBackend(demo.WithChunkDelay(50 * time.Millisecond))
//	catalog := models.NewMemoryCatalog(demo.TextModels()...)
//	chat.Register(mux, chat.NewHandler(catalog, text.Chat()))
//	completions.Register(mux, completions.NewHandler(catalog, text.Completions()))
//
// [TextModels] lists three models for the catalogue: [ChatModel]
// ("demo-chat"), [ReasonerModel] ("demo-reasoner", a reasoning model) and
// [InstructModel] ("demo-instruct", compat only, without responses).
// The backend serves any model id; what it reads from the catalogue entry
// is the Reasoning flag.
//
// The reply. Each choice is one text, built from the input:
//
//	[Choice i of n. ]You said: "<input>".[ I see k image(s): <names>.] This is
//	the gatewaykit demo model, counting to twenty: one, two, three, …, twenty.
//
// The prefix "Choice i of n. " is there when n > 1, so the n choices
// differ. For chat, <input> is the text of the last user message (its
// string, or its text parts joined with "\n"), cut to its first 64 tokens
// (then "…" is appended); a conversation that ends with a tool message is
// answered with The tool returned: "<its content>". instead. Images of the
// last user message are named by their URL (cut to 100 characters) or, for
// a data URI, as "an inline image/png image". For legacy completions,
// <input> is the prompt, and an array of prompts gets n choices for each.
// Every reply holds a few dozen tokens at least (60 for a one-word input),
// so every token cap and stop sequence is observable.
//
// Tokens. The demo tokenizer counts a run of letters and digits, or any
// other single non-space character, as one token, together with the
// whitespace before it; whitespace at the very end is one more token.
// [CountTokens] implements it: "Hello, world!" is 4 tokens ("Hello", ",",
// " world", "!"). prompt_tokens counts the text of every message (string
// content, text parts, tool call names and arguments) plus [ImageTokens]
// (85) per image, or the text of every legacy prompt. completion_tokens
// counts what the choices carry, reasoning included.
//
// Limits, in this order. Stop sequences cut the text before the first
// occurrence of any of them (finish_reason stop; empty sequences are
// ignored). max_completion_tokens, or else max_tokens, caps each choice's
// tokens, reasoning first, then text: a choice cut short ends with
// finish_reason length. Otherwise it ends with stop.
//
// Reasoning. When the catalogue marks the model Reasoning (demo-reasoner),
// each chat choice carries reasoning_content first, "The prompt has <N>
// tokens[ and k image(s)]. I will repeat the last message and count to
// twenty." (or, before a tool call, "… The user needs the tool <name>, so I
// will call it."), and usage reports its tokens in
// completion_tokens_details.reasoning_tokens.
//
// Tools. A chat choice calls one tool, with content null and finish_reason
// tool_calls, when tool_choice names a function (that one), is "required"
// (the first tool), or is "auto" or absent and the last user message
// contains the name of a tool (the first such tool) — unless the
// conversation ends with a tool result. tool_choice "none" never calls.
// The arguments are a JSON object holding the required properties of the
// tool's parameters schema, in the order of "required", each a value of
// its schema: const, else the first enum value, else the first of
// anyOf/oneOf, else by type — strings are the <input> text, integers and
// numbers their minimum or 1, booleans true, null null, arrays minItems
// samples of items, objects their own required properties. A tool call is
// never cut by the token cap, so its arguments are always valid JSON. The
// backend leaves tool call ids empty: the chat handler fills them in
// ("call_" and random characters).
//
// Structured output. With response_format json_object the content is
// {"reply": "<the reply text>"}; with json_schema it is a sample of the
// schema as for tool arguments, with the reply text as every string.
//
// Directives. A message (or prompt) containing [DirectiveContentFilter],
// "[demo:content_filter]", gets empty choices with finish_reason
// content_filter. One containing [DirectiveFail], "[demo:fail]", fails with
// 502 bad_gateway: Complete at once, Stream after its first chunk (so a
// streamed error after the first byte can be seen).
//
// Streaming. Stream sends each choice in chunks of one token
// ([WithTokensPerChunk] sets more): reasoning, then content, then the tool
// call (its name, then its arguments). The choices take turns, one chunk
// each, the finish reason goes with each choice's last chunk, and the usage
// follows. The streamed pieces put together are exactly what Complete
// returns. [WithChunkDelay] waits before each chunk, to make streaming
// visible with curl:
//
//	curl -N localhost:8080/v1/chat/completions -H 'Authorization: Bearer sk-demo' \
//	  -H 'Content-Type: application/json' \
//	  -d '{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}'
//
// A stream calls the Flush of its Params (chat.Params.Flush, …) before
// each wait, so that the chunks before it reach the client; without a
// delay it has every chunk at hand, which it says with one Flush first,
// and the handler sends the reply in one write. The request's context
// ends a stream (and a wait) at once. A TextBackend is safe for
// concurrent use.
//
// # Responses
//
// [TextBackend.Responses] returns the responses side, a
// responses.StreamingBackend and responses.Compactor, with the same
// tokenizer, limits and directives:
//
//	responses.Register(mux, responses.NewHandler(catalog, text.Responses()))
//
// A response has one output item (two for a reasoning model, below): a
// message whose text is the chat reply text above, for the last user message of the conversation (Params
// History, then the input), or for the output of a function_call_output
// item that ends it; or a function call. When the conversation has user
// messages before the one answered (earlier turns of a
// previous_response_id chain, or a compaction), the text starts with
// Earlier you said: "<the user message before it>" (<k> earlier
// message[s]). — that is how a test sees that the backend got the earlier
// turns. input_tokens counts the instructions and the text of every item
// (messages, function call names and arguments, function outputs,
// compacted messages) plus [ImageTokens] per input_image; output_tokens
// the output. max_output_tokens cuts the text (status incomplete, reason
// max_output_tokens). Tools follow the chat rules, over the function
// tools of the request (other tool types are ignored): tool_choice naming
// a function, "required" (the first function tool), or "auto" and a tool
// name in the last user message; never right after a function output.
// text.format json_object and json_schema give JSON as response_format
// does for chat. A reasoning model (demo-reasoner) puts a reasoning item
// first, whose summary is the chat reasoning text; its tokens count as
// output tokens and in output_tokens_details.reasoning_tokens, and the
// cap cuts it first (leaving no message when it is used up).
// [DirectiveContentFilter] gives no output and reason content_filter;
// [DirectiveFail] fails as for chat. Streams send the text (or the
// arguments, after a delta naming the function) in chunks of
// [WithTokensPerChunk] tokens, then the usage.
//
// Compact returns a compaction whose encrypted_content is
// "demo-compaction:" and the base64 of a JSON array of the conversation's
// user messages (not encrypted: the demo has nothing to hide); a later
// request that sends it back as a compaction input item is answered as if
// those messages came before its input. A compaction item the demo did
// not make is a 400.
//
// # Video
//
// The video generator, [VideoGenerator] ([NewVideoGenerator]), implements
// videos.Generator for the models of [VideoModels]: demo-video, a model "of
// the first kind" (4, 8, 12, 16 or 20 seconds; size required, one of
// 1280x720, 720x1280, 1792x1024, 1024x1792) and demo-video-pro (every
// mode of the multimodal path, both resolutions, any duration). It is
// deterministic: the same request gives the same bytes. A generation waits
// [WithVideoDuration] (3 seconds by default; 0 in tests) in
// [WithVideoProgressSteps] equal steps (5), reporting rising progress, then
// writes a real, playable MP4 (H.264 Constrained Baseline, yuv420p) of the
// task's size (1280x720 when none) and duration (4 seconds when none) at
// [WithVideoFPS] frames per second (24): each second is one flat colour
// derived from the prompt, the first taking the average colour of a PNG or
// JPEG reference image when the request has one, with a key frame per
// second; ffprobe reports the requested width, height, frame rate and
// duration, as the task's metadata does. It also writes a PNG thumbnail of
// the first frame, at most 640 pixels wide, and reports a seed (a hash of
// the prompt). A prompt containing #fail ([FailMarker]) fails the task
// halfway with code generation_failed; so do odd sizes, frames over
// 3840x2160 pixels and durations over 60 seconds.
//
// # The other access points
//
// [AccessModels] lists one model per access point, each of an endpoint
// type of its own (package models): [EmbeddingModel] "demo-embedding"
// (embeddings), [ModerationModel] "demo-moderation" (moderation),
// [RerankModel] "demo-rerank" (rerank), [ImageModel] "demo-image"
// (image-generation), [SpeechModel] "demo-tts" (audio-speech) and
// [TranscriptionModel] "demo-whisper" (audio-transcription). The backends
// serve any model id, and are safe for concurrent use.
//
//	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
//	embeddings.Register(mux, embeddings.NewHandler(catalog, demo.NewEmbeddingBackend()))
//	images.Register(mux, images.NewHandler(catalog, demo.NewImageBackend()))
//	audio.Register(mux, audio.NewHandler(catalog, demo.NewAudioBackend()))
//
// Embeddings ([EmbeddingBackend]). Each input gets a unit vector of
// dimensions values ([EmbeddingDimensions], 256, by default): every
// lower-cased word of the text (every token id of a token array, as
// "#<id>") adds ±1 at four positions picked by its FNV-1a hash, and the
// sum is normalised ([Embedding]); a text without words is hashed whole.
// Texts that share words have vectors with a positive dot product, the
// same text the same vector. prompt_tokens counts the demo tokens of the
// texts, or the ids of the token arrays.
//
// Moderations ([ModerationBackend]). A text is flagged for the category
// of each trigger word it holds ([ModerationTriggers]; whole words, any
// case), and for that category's parent ("harassment" for
// "harassment/threatening"): idiot (harassment), threaten
// (harassment/threatening), hate (hate), exterminate (hate/threatening),
// steal (illicit), bomb (illicit/violent), suicide (self-harm), overdose
// (self-harm/instructions), hopeless (self-harm/intent), explicit
// (sexual), underage (sexual/minors), kill (violence), gore
// (violence/graphic). A flagged category scores 0.97 (its parent 0.9);
// the others a small score below 0.01 derived from the text. The text
// parts of a multimodal input are classified together; images are not
// looked at (each counts [ImageTokens] input tokens).
//
// Rerank ([RerankBackend]). A document's score is the number of distinct
// words it shares with the query over the geometric mean of their
// numbers of distinct words, rounded to 4 decimals ([RerankScore]): 1
// for the same words, 0 for none in common.
//
// Images ([ImageBackend], an images.Redrawer, so its url replies are
// served by the images handler without storage). Each image is a real
// PNG (or JPEG, with output_format jpeg; webp is a 400) of the requested
// size (1024x1024 for none or "auto"; each side 16 to 2048 pixels, else a
// 400): a vertical gradient between two colours hashed from the prompt
// and the image's index, with one disc per word of the prompt (at most
// 32), placed, sized and coloured by the word's hash; background
// "transparent" makes the gradient transparent. The n images of a request
// differ; the same request draws the same bytes. revised_prompt says what
// was drawn; usage counts the prompt's demo tokens in, and one token per
// 4096 pixels of each image out.
//
// Audio ([AudioBackend]). Speech is 24 kHz 16-bit mono audio
// ([SpeechSampleRate]): one sine tone per word, 0.12 s plus 0.06 s per
// character long, pitched by the voice (140 to 300 Hz from its name or
// id) and the word, with 0.08 s gaps, 0.15 s after a comma and 0.3 s
// after the end of a sentence, all divided by speed — so its length
// follows the text. It is a WAV file ([WAV]) by default and for
// response_format wav, raw little-endian samples for pcm; mp3, opus, aac
// and flac are a 400 (the demo does not pretend to encode them). The WAV
// carries the text in a RIFF LIST/INFO chunk (ICMT), so the
// transcription of the demo's own speech gives its text back, with
// segments (one per sentence) and words timed where the speech put them.
// Any other file is transcribed as a sentence that describes it (name,
// size, media type, a WAV's duration). Translations give the same text:
// the demo's speech is English. Transcriptions report token usage: 10
// input tokens per second of audio, the text's demo tokens out.
package demo
