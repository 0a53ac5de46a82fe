package responses

import (
	"testing"
)

// benchRequest is a Responses request as the SDKs send one in a
// conversation: instructions, and input items of several kinds.
var benchRequest = []byte(`{"model":"gpt-4o-mini","instructions":"You are a helpful assistant.","input":[` +
	`{"type":"message","role":"user","content":"What is the weather in Paris?"},` +
	`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},` +
	`{"type":"function_call_output","call_id":"call_1","output":"{\"temp\":18,\"sky\":\"clear\"}"},` +
	`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"It is 18 degrees and clear in Paris."}]},` +
	`{"role":"user","content":[{"type":"input_text","text":"And tomorrow?"}]}],` +
	`"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}],` +
	`"stream":true,"store":false}`)

// BenchmarkDecodeRequest measures Request.UnmarshalJSON, which the handler
// calls directly, the decoder of
// every Responses request body, on benchRequest.
func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		var r Request
		if err := r.UnmarshalJSON(benchRequest); err != nil {
			b.Fatal(err)
		}
	}
}
