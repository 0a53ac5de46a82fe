package codecs

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/internal/chatdecode"
	"github.com/gatewaykit/gatewaykit/internal/codecdocs"
	"github.com/gatewaykit/gatewaykit/internal/codecdocs/relaytypes"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/responses"
)

// libraries are the two unmarshallers that the decoding benchmarks set
// side by side.
var libraries = []struct {
	name      string
	unmarshal func([]byte, any) error
}{
	{"EncodingJSON", json.Unmarshal},
	{"JSONv2", func(d []byte, v any) error { return jsonv2.Unmarshal(d, v) }},
}

// decodeBoth decodes doc into a new T with each library and fails unless
// both take it and agree.
func decodeBoth[T any](tb testing.TB, doc string) {
	tb.Helper()
	var got [2]T
	for i, lib := range libraries {
		if err := lib.unmarshal([]byte(doc), &got[i]); err != nil {
			tb.Fatalf("%s: %v", lib.name, err)
		}
	}
	if d := cmp.Diff(got[0], got[1]); d != "" {
		tb.Fatalf("encoding/json and json v2 decode differently (-encoding/json +json v2):\n%s", d)
	}
}

// benchDecode runs both libraries decoding doc into a new T.
func benchDecode[T any](b *testing.B, doc string) {
	decodeBoth[T](b, doc)
	data := []byte(doc)
	for _, lib := range libraries {
		b.Run(lib.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var v T
				if err := lib.unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The relay's decoders (relay's BenchmarkCodec*): the hot upstream
// documents into the types that the hand decoders fill.

func BenchmarkCodecChatChunk(b *testing.B) {
	benchDecode[relaytypes.ChatChunk](b, codecdocs.ChatChunk)
}

func BenchmarkCodecChatReply(b *testing.B) {
	benchDecode[relaytypes.ChatReply](b, codecdocs.ChatReply)
}

func BenchmarkCodecCompletionsReply(b *testing.B) {
	benchDecode[relaytypes.CompletionsReply](b, codecdocs.CompletionsReply)
}

func BenchmarkCodecResponsesEvent(b *testing.B) {
	benchDecode[relaytypes.ResponsesEvent](b, codecdocs.ResponsesDelta)
}

func BenchmarkCodecGeminiEvent(b *testing.B) {
	benchDecode[relaytypes.GeminiEvent](b, codecdocs.GeminiEvent)
}

// relayRequest is what the libraries do in place of the relay's
// parseRequestBody + encode: decode the request into a map of raw
// members, set the upstream's model name, encode it again.
func relayRequest(body []byte, unmarshal func([]byte, any) error, marshal func(any) ([]byte, error)) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := unmarshal(body, &m); err != nil {
		return nil, err
	}
	m["model"] = json.RawMessage(`"upstream-model"`)
	return marshal(m)
}

// BenchmarkCodecRequestBody is relay's BenchmarkCodecRequestBody for the
// libraries.
func BenchmarkCodecRequestBody(b *testing.B) {
	body := []byte(codecdocs.RelayRequest)
	for _, lib := range []struct {
		name      string
		unmarshal func([]byte, any) error
		marshal   func(any) ([]byte, error)
	}{
		{"EncodingJSON", json.Unmarshal, json.Marshal},
		{"JSONv2", func(d []byte, v any) error { return jsonv2.Unmarshal(d, v) }, func(v any) ([]byte, error) { return jsonv2.Marshal(v) }},
	} {
		b.Run(lib.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := relayRequest(body, lib.unmarshal, lib.marshal); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// chatBodies are the requests of chat's BenchmarkDecodeRequest.
var chatBodies = []struct{ name, body string }{
	{"JSON", codecdocs.ChatJSON},
	{"Stream64", codecdocs.ChatStream},
	{"Conversation", codecdocs.ChatConversation},
}

// BenchmarkDecodeRequest is chat's BenchmarkDecodeRequest for the
// libraries: chat.Request's own encoding/json path (Reflect) and the same
// path with json v2 as its unmarshaller (ReflectV2: the Extra members are
// still collected by the second walk, and the nested types'
// UnmarshalJSON methods still run). Reflect here leaves out the
// duplicate-member check of chat's Reflect; ReflectV2 does not make it.
func BenchmarkDecodeRequest(b *testing.B) {
	for _, c := range chatBodies {
		body := []byte(c.body)
		for _, path := range []struct {
			name      string
			unmarshal func([]byte, any) error
		}{{"Reflect", libraries[0].unmarshal}, {"ReflectV2", libraries[1].unmarshal}} {
			b.Run(c.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					var r chat.Request
					if err := chatdecode.WithUnmarshal(body, &r, path.unmarshal); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// responsesRequestV2 is responses.Request for json v2, its unmodelled
// members kept by a ",unknown" field instead of Request's UnmarshalJSON
// (the nested types' methods still run).
type (
	plainResponsesRequest responses.Request
	responsesRequestV2    struct {
		plainResponsesRequest
		Unknown map[string]jsontext.Value `json:",unknown"`
	}
)

// decodeResponsesRequestV2 decodes codecdocs.ResponsesRequest as
// BenchmarkResponsesDecodeRequest does.
func decodeResponsesRequestV2(data []byte, r *responsesRequestV2) error {
	return jsonv2.Unmarshal(data, r, jsonv2.MatchCaseInsensitiveNames(true))
}

// BenchmarkResponsesDecodeRequest is responses' BenchmarkDecodeRequest
// for json v2 with a ",unknown" field, which refuses duplicates itself
// (JSONv2Unknown, matching names case-insensitively as encoding/json
// does).
func BenchmarkResponsesDecodeRequest(b *testing.B) {
	data := []byte(codecdocs.ResponsesRequest)
	b.Run("JSONv2Unknown", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var r responsesRequestV2
			if err := decodeResponsesRequestV2(data, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// responsesTextEvent is the wire shape of responses' hand-encoded
// response.output_text.delta event (responses' textEvent, a test type).
type responsesTextEvent struct {
	Type           string `json:"type"`
	SequenceNumber int    `json:"sequence_number"`
	ItemID         string `json:"item_id"`
	OutputIndex    int    `json:"output_index"`
	ContentIndex   int    `json:"content_index"`
	Delta          string `json:"delta,omitempty"`
	Text           string `json:"text,omitempty"`
	Logprobs       []any  `json:"logprobs"`
}

// encoded are the wire values of the kit's BenchmarkEncode* and the
// documents that they, and the hand encoders, write.
var encoded = func() []struct {
	name string
	want string
	v    any
} {
	content := "Hello! This is a canned reply from the mock upstream. It is about as long as a short real answer."
	index := 0
	return []struct {
		name string
		want string
		v    any
	}{
		{"ChatChunk", codecdocs.EncChatChunk, chat.Chunk{ID: "chatcmpl-0123456789abcdefghij", Object: chat.ObjectChunk, Created: 1730000000, Model: "gpt-4o-mini",
			Choices: []chat.ChunkChoice{{Index: 0, Delta: chat.ChunkDelta{Content: "hello "}}}}},
		{"ChatCompletion", codecdocs.EncChatCompletion, chat.Completion{ID: "chatcmpl-0123456789abcdefghij", Object: chat.ObjectCompletion, Created: 1730000000, Model: "gpt-4o-mini",
			Choices: []chat.Choice{{Index: 0, Message: chat.ChoiceMessage{Role: "assistant", Content: &content}, FinishReason: chat.FinishStop}},
			Usage:   chat.Usage{PromptTokens: 19, CompletionTokens: 24, TotalTokens: 43}}},
		{"CompletionsChunk", codecdocs.EncCompletionsChunk, completions.Chunk{ID: "cmpl-0123456789abcdefghij", Object: completions.ObjectCompletion, Created: 1730000000,
			Choices: []completions.ChunkChoice{{Index: 0, Text: "hello "}}}},
		{"ResponsesTextDelta", codecdocs.EncResponsesTextDelta, responsesTextEvent{Type: responses.EventOutputTextDelta, SequenceNumber: 7,
			ItemID: "msg_0123456789abcdefghij", Delta: "hello ", Logprobs: []any{}}},
		{"MessagesDelta", codecdocs.EncMessagesDelta, messages.Event{Type: messages.EventContentBlockDelta, Index: &index,
			Delta: &messages.EventDelta{Type: "text_delta", Text: "hello "}}},
	}
}()

// encoders are the two encoders that the encoding benchmarks set side by
// side, each appending v to buf; json v2 with EscapeForJS, as the others
// escape U+2028 and U+2029.
var encoders = []struct {
	name   string
	encode func(buf *bytes.Buffer, v any) error
}{
	{"EncodingJSON", func(buf *bytes.Buffer, v any) error {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	}},
	{"JSONv2", func(buf *bytes.Buffer, v any) error {
		return jsonv2.MarshalWrite(buf, v, jsonv2.Deterministic(true), jsontext.EscapeForJS(true))
	}},
}

// BenchmarkEncode is the kit's BenchmarkEncode* for the libraries: each
// encodes the wire value into a buffer reused from one run to the next,
// as the stream writers do; it fails unless each writes the document
// that the hand encoder writes.
func BenchmarkEncode(b *testing.B) {
	for _, e := range encoded {
		checkEncoded(b, e.name, e.want, e.v)
		b.Run(e.name+"/EncodingJSON", func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			for b.Loop() {
				buf.Reset()
				if err := enc.Encode(e.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(e.name+"/JSONv2", func(b *testing.B) {
			b.ReportAllocs()
			var buf bytes.Buffer
			opts := jsonv2.JoinOptions(jsonv2.Deterministic(true), jsontext.EscapeForJS(true))
			for b.Loop() {
				buf.Reset()
				if err := jsonv2.MarshalWrite(&buf, e.v, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// checkEncoded fails unless both encoders write want for v.
func checkEncoded(tb testing.TB, name, want string, v any) {
	tb.Helper()
	for _, enc := range encoders {
		var buf bytes.Buffer
		if err := enc.encode(&buf, v); err != nil {
			tb.Fatalf("%s, %s: %v", name, enc.name, err)
		}
		if got := string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))); got != want {
			tb.Errorf("%s: %s writes\n%s\nwant\n%s", name, enc.name, got, want)
		}
	}
}

// TestDecodersAgree holds the benchmarks' decoders to each other: each
// library takes each document and decodes the same value.
func TestDecodersAgree(t *testing.T) {
	decodeBoth[relaytypes.ChatChunk](t, codecdocs.ChatChunk)
	decodeBoth[relaytypes.ChatReply](t, codecdocs.ChatReply)
	decodeBoth[relaytypes.CompletionsReply](t, codecdocs.CompletionsReply)
	decodeBoth[relaytypes.ResponsesEvent](t, codecdocs.ResponsesDelta)
	decodeBoth[relaytypes.GeminiEvent](t, codecdocs.GeminiEvent)
	var bodies [2][]byte
	for i, lib := range libraries {
		var err error
		if bodies[i], err = relayRequest([]byte(codecdocs.RelayRequest), lib.unmarshal, json.Marshal); err != nil {
			t.Fatalf("%s: %v", lib.name, err)
		}
	}
	if !bytes.Equal(bodies[0], bodies[1]) {
		t.Errorf("the request sent on:\n%s\nwith json v2:\n%s", bodies[0], bodies[1])
	}
	for _, c := range chatBodies {
		var want, got chat.Request
		if err := json.Unmarshal([]byte(c.body), &want); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, lib := range libraries {
			got = chat.Request{}
			if err := chatdecode.WithUnmarshal([]byte(c.body), &got, lib.unmarshal); err != nil {
				t.Fatalf("%s, %s: %v", c.name, lib.name, err)
			}
			if !reflect.DeepEqual(want, got) {
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(got)
				t.Errorf("%s, %s: not chat.Request.UnmarshalJSON's request:\n%s\nwant\n%s", c.name, lib.name, g, w)
			}
		}
	}
	var r responsesRequestV2
	if err := decodeResponsesRequestV2([]byte(codecdocs.ResponsesRequest), &r); err != nil || len(r.Unknown) != 1 || r.Model != "gpt-4o-mini" {
		t.Errorf("json v2: %v, %+v", err, r)
	}
}

// TestEncodersAgree holds the encoding benchmarks' libraries to the
// documents of the hand encoders.
func TestEncodersAgree(t *testing.T) {
	for _, e := range encoded {
		checkEncoded(t, e.name, e.want, e.v)
	}
}
