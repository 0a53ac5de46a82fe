package responses

import (
	"reflect"
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

// benchRequest is a Responses request as the SDKs send one in a
// conversation: instructions, and input items of several kinds.
var benchRequest = []byte(codecdocs.ResponsesRequest)

// BenchmarkDecodeRequest measures the decoding of a Responses request
// body as the handler does it: Request.UnmarshalJSON, which keeps the
// unmodelled members in Extra with a scan after encoding/json, then the
// duplicate-member check. json v2 with a ",unknown" field decoding the
// same body (JSONv2Unknown) is measured in module bench (bench/codecs),
// which keeps json v2 out of the kit's go.mod. BENCHMARKS.md has the
// figures.
func BenchmarkDecodeRequest(b *testing.B) {
	typ := reflect.TypeFor[*Request]()
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
}
