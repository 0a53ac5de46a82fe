package responses

import (
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/gatewaykit/gatewaykit/internal/httpjson"
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
	`"stream":true,"store":false,"user":"u-1"}`)

// requestV2 is Request for json v2, its unmodelled members kept by a
// ",unknown" field instead of Request's UnmarshalJSON (the nested types'
// methods still run).
type (
	plainRequestV2 Request
	requestV2      struct {
		plainRequestV2
		Unknown map[string]jsontext.Value `json:",unknown"`
	}
)

// BenchmarkDecodeRequest measures the decoding of a Responses request
// body as the handler does it (Hand: Request.UnmarshalJSON, which keeps
// the unmodelled members in Extra with a scan after encoding/json, then
// the duplicate-member check) beside json v2 with a ",unknown" field,
// which refuses duplicates itself (JSONv2Unknown, matching names
// case-insensitively as encoding/json does). BENCHMARKS.md has the
// figures.
func BenchmarkDecodeRequest(b *testing.B) {
	typ := reflect.TypeFor[*Request]()
	var v2 requestV2
	if err := jsonv2.Unmarshal(benchRequest, &v2, jsonv2.MatchCaseInsensitiveNames(true)); err != nil || len(v2.Unknown) != 1 || v2.Model != "gpt-4o-mini" {
		b.Fatalf("json v2: %v, %+v", err, v2)
	}
	b.Run("Hand", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchRequest)))
		for b.Loop() {
			var r Request
			if err := r.UnmarshalJSON(benchRequest); err != nil {
				b.Fatal(err)
			}
			if err := httpjson.CheckObject(benchRequest, typ); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("JSONv2Unknown", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchRequest)))
		opt := jsonv2.MatchCaseInsensitiveNames(true)
		for b.Loop() {
			var r requestV2
			if err := jsonv2.Unmarshal(benchRequest, &r, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}
