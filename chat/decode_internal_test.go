package chat

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// The hooks of the external tests (FuzzDecodeRequestFast in fuzz_test.go).
var (
	// CheckDecodeRequestFast is checkDecodeRequestFast.
	CheckDecodeRequestFast = checkDecodeRequestFast
	// DecodeBenchConversation is the larger request of
	// BenchmarkDecodeRequest.
	DecodeBenchConversation = benchConversation
	// BenchJSON and BenchStream are the requests of BenchmarkStack,
	// which BenchmarkDecodeRequest decodes too.
	BenchJSON, BenchStream = benchJSON, benchStream
)

// checkDecodeRequestFast decodes body with the fast path and with
// encoding/json, and fails t unless they agree whenever the fast path
// reports handled: the same Request (Extra maps and nil-versus-empty
// included), encoded to the same bytes. It also checks that
// decodeRequest, whichever path it takes, returns what encoding/json
// does, and that the fast result shares no memory with the body. It
// reports whether the fast path handled body.
func checkDecodeRequestFast(t testing.TB, body []byte) (handled bool) {
	t.Helper()
	want := new(Request)
	wantErr := decodeRequestReflect(body, want)

	scratch := bytes.Clone(body)
	fast := new(Request)
	handled = decodeRequestFast(scratch, fast)
	for i := range scratch {
		scratch[i] = 'x' // a result that shared the body's memory would change
	}
	if handled {
		require.NoError(t, wantErr, "the fast path handled a body that encoding/json rejects: %s", body)
		requireSameRequest(t, want, fast, body)
	}

	got := new(Request)
	gotErr := decodeRequest(body, got)
	if wantErr != nil {
		require.Equal(t, apierrors.From(wantErr), apierrors.From(gotErr), "%s", body)
		return handled
	}
	require.NoError(t, gotErr, "%s", body)
	requireSameRequest(t, want, got, body)
	return handled
}

func requireSameRequest(t testing.TB, want, got *Request, body []byte) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Content{})); diff != "" {
		t.Fatalf("%s\n(-encoding/json +fast):\n%s", body, diff)
	}
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	gotJSON, err := json.Marshal(got)
	require.NoError(t, err)
	require.Equal(t, string(wantJSON), string(gotJSON), "%s", body)
}

func TestDecodeRequestFastHandlesTheGoldenRequests(t *testing.T) {
	t.Parallel()
	for _, req := range golden.Requests(t) {
		require.True(t, checkDecodeRequestFast(t, req.Body), "%s is left to encoding/json", req.Name)
	}
	for name, body := range benchBodies {
		require.True(t, checkDecodeRequestFast(t, []byte(body)), "%s is left to encoding/json", name)
	}
}

func TestDecodeRequestFast(t *testing.T) {
	t.Parallel()
	const msgs = `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct {
		name    string
		body    string
		handled bool
	}{
		// Handled: the result is encoding/json's.
		{"minimal", `{"model":"m",` + msgs + `}`, true},
		{"white space everywhere", " \t\r\n{ \"model\" : \"m\" , \"messages\" : [ { \"role\" : \"user\" , \"content\" : [ { \"type\" : \"text\" , \"text\" : \"a\" } ] } ] , \"stop\" : [ \"x\" , null ] } \n", true},
		{"empty object", `{}`, true},
		{"empty arrays", `{"model":"m","messages":[],"tools":[],"stop":[],"tool_calls":[],"x":[]}`, true},
		{"null members", `{"model":null,"messages":null,"stream":null,"stream_options":null,"temperature":null,"top_p":null,"n":null,"max_tokens":null,"max_completion_tokens":null,"stop":null,"tools":null,"tool_choice":null,"response_format":null}`, true},
		{"null message members", `{"messages":[{"role":null,"content":null,"name":null,"tool_calls":null,"tool_call_id":null}]}`, true},
		{"empty content parts", `{"messages":[{"role":"user","content":[]}]}`, true},
		{"empty tool calls", `{"messages":[{"role":"assistant","tool_calls":[]}]}`, true},
		{"content of other kinds", `{"messages":[{"content":7},{"content":-0.5e3},{"content":{"a":[1]}},{"content":true},{"content":false}]}`, true},
		{"escapes in strings", `{"model":"m\u00e9\n","messages":[{"role":"us\u0065r","content":"a\"b\\c\/d\b\f\n\r\t\u2028 \ud83d\ude00"}]}`, true},
		{"lone surrogate", `{"model":"m","messages":[{"role":"user","content":"\ud800 \udc00x"}]}`, true},
		{"surrogates that do not pair", `{"model":"\ud83d\u0041 \udc00\ud800 \ud83d\n \ud83d\ud83d\ude00 \ud83d"}`, true},
		{"escapes beside invalid UTF-8", "{\"model\":\"\xff\\n\xe2\x82\\u00e9\xf0\x9f\x98\x80\\/\"}", true},
		{"invalid UTF-8", "{\"model\":\"m\xff\",\"messages\":[{\"role\":\"user\",\"content\":\"a\xc3\"}]}", true},
		{"valid UTF-8", `{"model":"modèle","messages":[{"role":"user","content":"中文 😀"}]}`, true},
		{"unknown members at every level", `{"seed":42,"user":"u","logprobs":false,"parallel_tool_calls":true,"metadata":{"a":"b"},"x":null,"y":-1.5E+2,` +
			`"messages":[{"role":"user","x":[1,{"y":"z"}],"content":[{"type":"input_audio","input_audio":{"data":"AAA","format":"wav"}},{"type":"text","text":"t","cache_control":{"type":"ephemeral"}}]}],` +
			`"stream_options":{"include_usage":true,"continuous_usage_stats":false},"tools":[{"type":"function","function":{"name":"f"},"cache":{}}]}`, true},
		{"unknown members that encoding/json drops are left to it", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","index":0,"function":{"name":"f","arguments":"{}","x":1}}]}],` +
			`"tool_choice":{"type":"function","x":[],"function":{"name":"f","y":{}}},"response_format":{"type":"json_schema","x":1,"json_schema":{"name":"n","z":"","schema":{"type":"object"},"strict":false}},` +
			`"messages2":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/y.png","detail":"low","q":1}}]}]}`, false},
		{"an unknown member that encoding/json drops", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u","q":1}}]}]}`, false},
		{"a repeated unknown member is left to encoding/json", `{"x":1,"x":{"a":2}}`, false},
		{"a repeated unknown member of a message is left to encoding/json", `{"messages":[{"y":1,"y":2}]}`, false},
		{"a repeated member inside a raw value is left to encoding/json", `{"x":[{"a":1,"a":2}]}`, false},
		{"a repeated member inside parameters is left to encoding/json", `{"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","type":"array"}}}]}`, false},
		{"raw values without repeated members", `{"x":[{"a":1,"b":{"a":2}},"{\"a\":1,\"a\":2}"]}`, true},
		{"raw values as sent", `{"tools":[{"type":"function","function":{"name":"f","description":"d","parameters":{ "type" : "object" , "properties" : { } },"strict":true}}],"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":null}}}`, true},
		{"parameters null", `{"tools":[{"type":"function","function":{"name":"f","parameters":null,"strict":null}}]}`, true},
		{"function null", `{"tools":[{"type":"function","function":null}],"messages":[{"tool_calls":[{"id":"c","function":null}]}]}`, true},
		{"image_url null", `{"messages":[{"content":[{"type":"image_url","image_url":null}]}]}`, true},
		{"numbers", `{"temperature":0,"top_p":1e-1,"n":-0,"max_tokens":123456789012345678,"max_completion_tokens":-7}`, true},
		{"float forms", `{"temperature":-0.0,"top_p":12.5e+3}`, true},
		{"stop as a string", `{"stop":"\n"}`, true},
		{"stop with null elements", `{"stop":[null,"a"]}`, true},
		{"tool_choice modes", `{"tool_choice":"none"}`, true},
		{"tool_choice required", `{"tool_choice":"requ\u0069red"}`, true},
		{"tool_choice object", `{"tool_choice":{"function":{"name":"f"},"type":"function"}}`, true},
		{"stream", `{"stream":true,"stream_options":{"include_usage":false}}`, true},
		{"keys named like untagged or hidden fields", `{"Extra":1,"-":2,"":3,"messages":[{"Extra":{},"invalid":"x","Text":"t","Parts":[]}]}`, true},
		{"unknown key that only shares a prefix", `{"models":1,"message":2,"Stream_":3}`, true},

		// Left to encoding/json: same result or error either way.
		{"not an object", `[]`, false},
		{"null body", `null`, false},
		{"empty body", ``, false},
		{"trailing value", `{"model":"m"} {}`, false},
		{"trailing comma", `{"model":"m",}`, false},
		{"missing colon", `{"model" "m"}`, false},
		{"missing comma", `{"model":"m" "n":1}`, false},
		{"unterminated", `{"model":"m"`, false},
		{"unterminated array", `{"stop":["a"`, false},
		{"bad literal", `{"stream":tru}`, false},
		{"literal run on", `{"stream":truex}`, false},
		{"bad number", `{"x":01}`, false},
		{"bad fraction", `{"x":1.}`, false},
		{"bad exponent", `{"x":1e}`, false},
		{"plus sign", `{"x":+1}`, false},
		{"control character in a string", "{\"model\":\"a\tb\"}", false},
		{"bad escape", `{"model":"\x"}`, false},
		{"short unicode escape", `{"model":"\u12"}`, false},
		{"invalid JSON in an unknown member", `{"x":{"a":}}`, false},
		{"mismatched brackets in an unknown member", `{"x":[1}}`, false},
		{"escape in a key", `{"mod\u0065l":"m"}`, false},
		{"non-ASCII key", `{"modèle":"m"}`, false},
		{"key folding with the long s", `{"ſtream":true}`, false},
		{"key that only matches case-insensitively", `{"Model":"m"}`, false},
		{"message key that only matches case-insensitively", `{"messages":[{"ROLE":"user"}]}`, false},
		{"dropped key that only matches case-insensitively", `{"tool_choice":{"Type":"function","function":{"name":"f"}}}`, false},
		{"duplicate member", `{"model":"a","model":"b"}`, false},
		{"duplicate message member", `{"messages":[{"content":"a","content":"b"}]}`, false},
		{"null message", `{"messages":[null]}`, false},
		{"null part", `{"messages":[{"content":[null]}]}`, false},
		{"null tool", `{"tools":[null]}`, false},
		{"null tool call", `{"messages":[{"tool_calls":[null]}]}`, false},
		{"model of the wrong kind", `{"model":1}`, false},
		{"stream of the wrong kind", `{"stream":"true"}`, false},
		{"n with a fraction", `{"n":1.0}`, false},
		{"n with an exponent", `{"n":1e2}`, false},
		{"n with 19 digits", `{"n":1234567890123456789}`, false},
		{"temperature out of range", `{"temperature":1e400}`, false},
		{"stop of the wrong kind", `{"stop":1}`, false},
		{"stop element of the wrong kind", `{"stop":[1]}`, false},
		{"tool_choice unknown mode", `{"tool_choice":"maybe"}`, false},
		{"tool_choice wrong type", `{"tool_choice":{"type":"tool","function":{"name":"f"}}}`, false},
		{"tool_choice without a name", `{"tool_choice":{"type":"function","function":{}}}`, false},
		{"tool_choice of the wrong kind", `{"tool_choice":1}`, false},
		{"nested deeper than jsonext.ScanValue follows", `{"x":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, false},
		{"nested less deep", `{"x":` + strings.Repeat("[", 500) + strings.Repeat("]", 500) + `}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.handled, checkDecodeRequestFast(t, []byte(tc.body)))
		})
	}
}

func TestDecodeRequestFastInternsConstants(t *testing.T) {
	t.Parallel()
	var r Request
	require.True(t, decodeRequestFast([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"user"}]}]}`), &r))
	require.Equal(t, RoleUser, r.Messages[0].Role)
	require.Equal(t, PartText, r.Messages[0].Content.Parts[0].Type)
	require.Equal(t, "user", r.Messages[0].Content.Parts[0].Text)
}

// The bodies of BenchmarkStack (bench_test.go), and a longer conversation
// with tools, tool calls, an image and members the types do not model.
var benchBodies = map[string]string{
	"JSON":         benchJSON,
	"Stream64":     benchStream,
	"Conversation": benchConversation,
}

// The requests of BenchmarkStack: the JSON one is answered with 61 tokens
// (~600 bytes); the streamed one with 64 chunks (63 one-token content
// chunks and the finish chunk), then [DONE]. Module bench decodes the
// same documents (internal/codecdocs) with json v2 (bench/codecs).
const (
	benchJSON         = codecdocs.ChatJSON
	benchStream       = codecdocs.ChatStream
	benchConversation = codecdocs.ChatConversation
)

// BenchmarkDecodeRequest compares the encoding/json path (Reflect) with
// decodeRequest, which takes the fast path for these bodies. The same
// path with json v2 as its unmarshaller (ReflectV2) is measured in module
// bench (bench/codecs), which keeps json v2 out of the kit's go.mod.
func BenchmarkDecodeRequest(b *testing.B) {
	for _, name := range []string{"JSON", "Stream64", "Conversation"} {
		body := []byte(benchBodies[name])
		require.True(b, checkDecodeRequestFast(b, body))
		for _, path := range []struct {
			name   string
			decode func([]byte, *Request) error
		}{
			{"Reflect", decodeRequestReflect},
			{"Fast", decodeRequest},
		} {
			b.Run(name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					var r Request
					if err := path.decode(body, &r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
