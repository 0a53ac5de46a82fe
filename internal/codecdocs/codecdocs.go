// Package codecdocs holds the hot JSON documents of the codec benchmarks
// (BENCHMARKS.md, JSON codecs), so that the hand codecs' benchmarks in
// the kit's packages and the json v2 benchmarks of module bench
// (bench/codecs), which keep json v2 out of the kit's go.mod, read the
// same bytes. It imports nothing, so that every package's tests can
// import it.
package codecdocs

// The upstream documents that the relay's hand decoders take, as the
// load test's mock upstream and OpenAI send them.
const (
	// ChatChunk is a content chunk of a chat completion stream.
	ChatChunk = `{"id":"chatcmpl-mock0001","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"delta":{"content":"hello "},"logprobs":null,"finish_reason":null}]}`
	// ChatReply is a chat completion.
	ChatReply = `{"id":"chatcmpl-mock0001","object":"chat.completion","created":1730000000,"model":"gpt-4o-mini","system_fingerprint":"fp_mock","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a canned reply from the mock upstream. It is about as long as a short real answer.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":24,"total_tokens":43,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
	// CompletionsReply is a text completion.
	CompletionsReply = `{"id":"cmpl-mock0001","object":"text_completion","created":1730000000,"model":"gpt-4o-mini","choices":[{"text":"Hello! This is a canned completion from the mock upstream.","index":0,"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":12,"total_tokens":17}}`
	// ResponsesDelta is a Responses response.output_text.delta event.
	ResponsesDelta = `{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_0001","output_index":0,"content_index":0,"delta":"hello ","logprobs":[]}`
	// GeminiEvent is a Gemini stream event with text.
	GeminiEvent = `{"candidates":[{"content":{"parts":[{"text":"hello "}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":19,"candidatesTokenCount":3,"totalTokenCount":22},"modelVersion":"gemini-2.5-flash","responseId":"abc123"}`
	// RelayRequest is the load test's chat request, which the relay
	// sends on with the upstream's model name.
	RelayRequest = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Say hello in one short sentence."}],"max_tokens":32,"stream":false}`
)

// The chat requests that chat.Request's decoders take: ChatJSON and
// ChatStream are the requests of chat's BenchmarkStack (the JSON one is
// answered with 61 tokens, ~600 bytes; the streamed one with 64 chunks,
// then [DONE]); ChatConversation is a longer conversation with tools,
// tool calls, an image and members the types do not model.
const (
	ChatJSON   = `{"model":"demo-chat","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	ChatStream = `{"model":"demo-chat","stream":true,"max_tokens":63,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
)

// ChatConversation: see [ChatJSON].
const ChatConversation = `{
  "model": "demo-chat",
  "messages": [
    {"role": "system", "content": "You are a travel assistant. Use the tools to look up flights and hotels, and answer in short sentences."},
    {"role": "user", "content": "I want to fly from Paris to Lisbon next Friday and stay two nights. What are my options?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "call_a1", "type": "function", "function": {"name": "search_flights", "arguments": "{\"from\":\"CDG\",\"to\":\"LIS\",\"date\":\"2026-12-04\"}"}},
      {"id": "call_a2", "type": "function", "function": {"name": "search_hotels", "arguments": "{\"city\":\"Lisbon\",\"nights\":2}"}}
    ]},
    {"role": "tool", "tool_call_id": "call_a1", "content": "[{\"flight\":\"TP433\",\"departs\":\"07:05\",\"price\":129},{\"flight\":\"AF1024\",\"departs\":\"12:40\",\"price\":164}]"},
    {"role": "tool", "tool_call_id": "call_a2", "content": "[{\"hotel\":\"Alfama Suites\",\"price\":210},{\"hotel\":\"Baixa Inn\",\"price\":150}]"},
    {"role": "assistant", "content": "TP433 leaves at 07:05 for 129 EUR, AF1024 at 12:40 for 164 EUR. Alfama Suites costs 210 EUR for two nights, Baixa Inn 150 EUR."},
    {"role": "user", "name": "ann", "content": [
      {"type": "text", "text": "Book the early flight and the cheaper hotel. Here is my passport:"},
      {"type": "image_url", "image_url": {"url": "https://example.com/passport.png", "detail": "low"}}
    ]}
  ],
  "tools": [
    {"type": "function", "function": {"name": "search_flights", "description": "Find flights between two airports on a date.", "parameters": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "date": {"type": "string", "format": "date"}}, "required": ["from", "to", "date"]}}},
    {"type": "function", "function": {"name": "search_hotels", "description": "Find hotels in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer", "minimum": 1}}, "required": ["city", "nights"]}}},
    {"type": "function", "function": {"name": "book", "description": "Book a flight and a hotel.", "strict": true, "parameters": {"type": "object", "properties": {"flight": {"type": "string"}, "hotel": {"type": "string"}}, "required": ["flight", "hotel"], "additionalProperties": false}}}
  ],
  "tool_choice": "auto",
  "parallel_tool_calls": true,
  "temperature": 0.2,
  "max_completion_tokens": 512,
  "user": "user-1234",
  "seed": 7
}`

// ResponsesRequest is a Responses request as the SDKs send one in a
// conversation: instructions, and input items of several kinds.
const ResponsesRequest = `{"model":"gpt-4o-mini","instructions":"You are a helpful assistant.","input":[` +
	`{"type":"message","role":"user","content":"What is the weather in Paris?"},` +
	`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
	`{"type":"function_call_output","call_id":"call_1","output":"{\"temp\":18,\"sky\":\"clear\"}"},` +
	`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is 18 degrees and clear in Paris."}]},` +
	`{"role":"user","content":[{"type":"input_text","text":"And tomorrow?"}]}],` +
	`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],` +
	`"stream":true,"store":false,"user":"u-1"}`

// The documents that the hand encoders write, each the encoding of an
// exported wire value (or, for ResponsesTextDelta, the event's) by
// encoding/json and json v2 alike.
const (
	// EncChatChunk is a content chunk of a chat completion stream.
	EncChatChunk = `{"id":"chatcmpl-0123456789abcdefghij","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"hello "},"finish_reason":null}]}`
	// EncChatCompletion is a 100-character chat completion.
	EncChatCompletion = `{"id":"chatcmpl-0123456789abcdefghij","object":"chat.completion","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! This is a canned reply from the mock upstream. It is about as long as a short real answer."},"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":24,"total_tokens":43}}`
	// EncCompletionsChunk is a text chunk of a completions stream.
	EncCompletionsChunk = `{"id":"cmpl-0123456789abcdefghij","object":"text_completion","created":1730000000,"choices":[{"index":0,"text":"hello ","finish_reason":null}]}`
	// EncResponsesTextDelta is a response.output_text.delta event.
	EncResponsesTextDelta = `{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_0123456789abcdefghij","output_index":0,"content_index":0,"delta":"hello ","logprobs":[]}`
	// EncMessagesDelta is a text content_block_delta event.
	EncMessagesDelta = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello "}}`
)
