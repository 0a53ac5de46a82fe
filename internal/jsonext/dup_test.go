package jsonext_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

type dupMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type dupEmbedded struct {
	User string `json:"user"`
}

type dupRequest struct {
	dupEmbedded
	Model    string            `json:"model"`
	Messages []dupMessage      `json:"messages"`
	Metadata map[string]string `json:"metadata"`
	Options  *struct {
		Level int `json:"level"`
	} `json:"options"`
	Plain  int            `json:""` // encoding/json's name: Plain
	Hidden string         `json:"-"`
	Extra  map[string]any `json:"-"`
}

func TestDuplicateMember(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[dupRequest]()
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		body string
		want string
	}{
		{"None", typ, `{"model":"a","messages":[{"role":"user","content":"hi"}],"metadata":{"a":"1","A":"2"},"x":{"y":1},"X":2}`, ""},
		{"Scalar", typ, `"model"`, ""},
		{"Empty", typ, ``, ""},
		{"EmptyObjects", nil, ` { } `, ""},
		{"TopLevel", typ, `{"model":"a","model":"b"}`, "model"},
		{"FoldsToAField", typ, `{"model":"a","MODEL":"b"}`, "model"},
		{"FoldsWithinAStruct", typ, `{"messages":[{"role":"user"},{"Role":"user","rOLE":"x"}]}`, "messages[1].role"},
		{"EscapedName", typ, `{"model":"a","\u006dodel":"b"}`, "model"},
		{"EmbeddedField", typ, `{"user":"a","User":"b"}`, "user"},
		{"UntaggedField", typ, `{"Plain":1,"plain":2}`, "Plain"},
		{"PointerToStruct", typ, `{"options":{"level":1,"LEVEL":2}}`, "options.level"},
		{"UnknownMemberExactly", typ, `{"x":1,"x":2}`, "x"},
		{"UnknownMembersOfOtherCase", typ, `{"x":1,"X":2}`, ""},
		{"HiddenFieldIsUnknown", typ, `{"Hidden":1,"hidden":2}`, ""},
		{"MapKeysExactly", typ, `{"metadata":{"a":"1","a":"2"}}`, "metadata.a"},
		{"InsideRawValue", typ, `{"messages":[{"content":[{"type":"text","type":"image"}]}]}`, "messages[0].content[0].type"},
		{"InsideUnknownMember", typ, `{"tools":[1,[{"a":{"b":1,"b":2}}]]}`, "tools[1][0].a.b"},
		{"InvalidUTF8FoldsToOneName", nil, "{\"\xff\":1,\"\xfe\":2}", "\ufffd"},
		{"EmptyName", nil, `{"a":{"":1,"":2}}`, `a.""`},
		{"WhiteSpace", nil, "{ \"a\" : [ 1 , { \"b\" : 1 , \"b\" : 2 } ] }", "a[1].b"},
		{"NoType", nil, `{"model":1,"MODEL":2}`, ""},
		{"KindMismatch", typ, `{"model":{"a":1,"a":2}}`, "model.a"},
		{"ArraysAreNotObjects", typ, `[{"model":1},{"model":2}]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.body != "" {
				require.True(t, json.Valid([]byte(tc.body)), tc.body)
			}
			require.Equal(t, tc.want, jsonext.DuplicateMember([]byte(tc.body), tc.typ))
		})
	}
}

// FuzzDuplicateMember checks that DuplicateMember never panics, and that
// on a valid body it agrees with a map decoding: an object with fewer
// distinct keys than members has a duplicate.
func FuzzDuplicateMember(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"a":{"b":[{"c":1,"c":1}]}}]`, `{"a":"\u0061","\u0061":1}`, `{}`, `"x"`, `{"a":[}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := jsonext.DuplicateMember(data, nil)
		if !json.Valid(data) {
			return
		}
		require.Equal(t, hasDuplicate(t, data), got != "", "%s: %q", data, got)
	})
}

// hasDuplicate is DuplicateMember's reference: decode with encoding/json,
// counting each object's members against its distinct keys.
func hasDuplicate(t *testing.T, data []byte) bool {
	var members []json.RawMessage
	switch bytes.TrimLeft(data, " \t\r\n")[0] {
	case '{':
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &m))
		n := 0
		require.NoError(t, jsonext.WalkObject(data, func(_, val []byte) error {
			n++
			members = append(members, val)
			return nil
		}))
		if n != len(m) {
			return true
		}
	case '[':
		require.NoError(t, jsonext.WalkArray(data, func(elem []byte) error {
			members = append(members, elem)
			return nil
		}))
	}
	for _, m := range members {
		if hasDuplicate(t, m) {
			return true
		}
	}
	return false
}

// BenchmarkDuplicateMember checks a tool's parameters, the raw value
// that the chat decoder checks most often.
func BenchmarkDuplicateMember(b *testing.B) {
	schema := []byte(`{"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "date": {"type": "string", "format": "date"}}, "required": ["from", "to", "date"]}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(schema)))
	for b.Loop() {
		if jsonext.DuplicateMember(schema, nil) != "" {
			b.Fatal("duplicate")
		}
	}
}

// BenchmarkDuplicateMemberTyped checks a request body against its type,
// as httpjson.CheckObject does on every body: it must not allocate.
func BenchmarkDuplicateMemberTyped(b *testing.B) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"Hello there"},{"role":"assistant","content":[{"type":"text"}]}],"metadata":{"a":"b"},"user":"u"}`)
	typ := reflect.TypeFor[dupRequest]()
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if jsonext.DuplicateMember(body, typ) != "" {
			b.Fatal("duplicate")
		}
	}
}

// TestDuplicateMemberInALargeObject: an object of many members is
// checked in linear time (a quadratic one would take minutes here), and
// a duplicate among them is found by both checks.
func TestDuplicateMemberInALargeObject(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString(`{"x":{`)
	for i := range 200_000 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	unique := append(bytes.Clone(b.Bytes()), `"last":0}}`...)
	twice := append(bytes.Clone(b.Bytes()), `"k17":0}}`...)
	require.Empty(t, jsonext.DuplicateMember(unique, nil))
	require.Equal(t, len(unique), jsonext.ScanValueOnce(unique, 0))
	require.Equal(t, "x.k17", jsonext.DuplicateMember(twice, nil))
	require.Equal(t, -1, jsonext.ScanValueOnce(twice, 0))
	require.Equal(t, len(twice), jsonext.ScanValue(twice, 0))
}
