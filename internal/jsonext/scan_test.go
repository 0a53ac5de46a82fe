package jsonext_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// unknownReference is what Unmarshal keeps, computed the slow, obvious
// way: decode every member into a map and drop the known ones.
func unknownReference(t testing.TB, data []byte, known jsonext.FieldSet) map[string]json.RawMessage {
	var all map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &all))
	var extra map[string]json.RawMessage
	for k, v := range all {
		if _, ok := known[k]; ok {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = v
	}
	return extra
}

func TestUnknownMembers(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`null`,
		`{}`,
		` { "model" : "m" , "seed":7 } `,
		`{"model":"m","user":"u","user":"again","x":{"a":[1,"]}"]},"y":[{},[]],"z":-1.5e3,"t":true,"n":null}`,
		`{"mod\u0065l":"escaped known","\u00e9":"escaped unknown","\"":1,"":2}`,
		"{\"Model\":\"case differs: unknown\",\"bad\xffutf8\":1}",
	} {
		got, err := jsonext.UnknownMembers([]byte(in), requestFields)
		require.NoError(t, err, in)
		require.Equal(t, unknownReference(t, []byte(in), requestFields), got, in)
	}
	// Not an object: nothing to keep.
	for _, in := range []string{`[1,2]`, `"s"`, `7`, ``} {
		got, err := jsonext.UnknownMembers([]byte(in), requestFields)
		require.NoError(t, err, in)
		require.Nil(t, got, in)
	}
}

func TestUnknownMembersCopiesValues(t *testing.T) {
	t.Parallel()
	data := []byte(`{"x":"abc"}`)
	got, err := jsonext.UnknownMembers(data, requestFields)
	require.NoError(t, err)
	copy(data, bytes.Repeat([]byte{'#'}, len(data)))
	require.Equal(t, json.RawMessage(`"abc"`), got["x"])
}

func TestMalformedIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{`, `{"a"`, `{"a":`, `{"a" 1}`, `{"a":1`, `{"a":"x`, `{"a":{"b":1}`, `{a:1}`, `{"a\`,
	} {
		_, err := jsonext.UnknownMembers([]byte(in), requestFields)
		require.Error(t, err, in)
	}
	for _, in := range []string{`[`, `[1,`, `[{"a":1}`, `["x`} {
		err := jsonext.WalkArray([]byte(in), func([]byte) error { return nil })
		require.Error(t, err, in)
	}
}

func TestWalkStopsAtError(t *testing.T) {
	t.Parallel()
	stop := fmt.Errorf("stop")
	n := 0
	err := jsonext.WalkObject([]byte(`{"a":1,"b":2}`), func(key, val []byte) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
	n = 0
	err = jsonext.WalkArray([]byte(`[1,2]`), func([]byte) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
}

func TestKeyIs(t *testing.T) {
	t.Parallel()
	require.True(t, jsonext.KeyIs([]byte(`"tools"`), "tools"))
	require.True(t, jsonext.KeyIs([]byte(`"t\u006fols"`), "tools"))
	require.False(t, jsonext.KeyIs([]byte(`"Tools"`), "tools"))
	require.False(t, jsonext.KeyIs([]byte(`"tools\n"`), "tools"))
	require.False(t, jsonext.KeyIs([]byte(`"`), "tools"))
}

func TestUnquote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`"plain"`:         "plain",
		`"é"`:             "é",
		`"a\"b\\c\u00e9"`: "a\"b\\cé",
		`"\ud800"`:        "\ufffd",
		"\"bad\xff\"":     "bad\ufffd",
	} {
		got, err := jsonext.Unquote([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{`"`, `"a`, `7`, "\"a\nb\""} {
		_, err := jsonext.Unquote([]byte(in))
		require.Error(t, err, in)
	}
}

func TestSkip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int // -1: no value
	}{
		{`"a\"b" ,`, 6},
		{`{"a":["}"]} x`, 11},
		{`[[],{}]`, 7},
		{`-1.5e3,`, 6},
		{`true}`, 4},
		{`null`, 4},
		{``, -1},
		{`,`, -1},
		{`"open`, -1},
		{`{"a":[1]`, -1},
	} {
		require.Equal(t, tc.want, jsonext.SkipValue([]byte(tc.in), 0), tc.in)
	}
	require.Equal(t, 3, jsonext.SkipSpace([]byte(" \t\nx"), 0))
	require.Equal(t, 2, jsonext.SkipSpace([]byte("\r\n"), 0))
	require.Equal(t, -1, jsonext.SkipString([]byte(`x"`), 0))
}

// FuzzUnmarshal checks that Unmarshal, and the scanner under it, agree
// with encoding/json: the same error or not, the same unknown members, and
// for valid JSON the same members, elements and strings.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `"s"`, `{"model":"m","seed":1,"x":[1,{"y":"}"}]}`,
		`{"m\u006fdel":1,"\ud800":2,"x":"\u0000"}`, `[{"a":1},2,"3",[4]]`, `{"a":1,"a":2}`,
		"{\"\xff\":1}", `{"model":"m"`, `{"a":tru}`, ` {"a" : [ 1 , 2 ] } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want request
		extra, err := jsonext.Unmarshal(data, &got, requestFields)
		type plain request
		werr := json.Unmarshal(data, (*plain)(&want))
		require.Equal(t, werr == nil, err == nil, "%v / %v", err, werr)
		if err == nil {
			require.Equal(t, unknownReference(t, data, requestFields), extra)
		}

		// The scanner never panics, whatever the input.
		_, _ = jsonext.UnknownMembers(data, requestFields)
		_ = jsonext.WalkArray(data, func([]byte) error { return nil })
		for i := range data {
			_ = jsonext.SkipValue(data, i)
		}
		if !json.Valid(data) {
			return
		}

		var members map[string]json.RawMessage
		if json.Unmarshal(data, &members) == nil && members != nil {
			walked := map[string]json.RawMessage{}
			require.NoError(t, jsonext.WalkObject(data, func(key, val []byte) error {
				name, err := jsonext.Unquote(key)
				require.NoError(t, err)
				if !strings.ContainsRune(name, utf8.RuneError) {
					require.True(t, jsonext.KeyIs(key, name))
				}
				walked[name] = val
				return nil
			}))
			require.Equal(t, members, walked)
		}
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) == nil && elems != nil {
			walked := []json.RawMessage{}
			require.NoError(t, jsonext.WalkArray(data, func(elem []byte) error {
				walked = append(walked, elem)
				return nil
			}))
			require.Equal(t, elems, walked)
		}
		if trimmed := bytes.Trim(data, " \t\r\n"); trimmed[0] == '"' {
			var s string
			require.NoError(t, json.Unmarshal(data, &s))
			got, err := jsonext.Unquote(trimmed)
			require.NoError(t, err)
			require.Equal(t, s, got)
			require.Equal(t, len(trimmed), jsonext.SkipString(trimmed, 0))
		}
		start := jsonext.SkipSpace(data, 0)
		require.Equal(t, len(bytes.TrimRight(data, " \t\r\n")), jsonext.SkipValue(data, start))
	})
}

// BenchmarkUnmarshal compares Unmarshal with the two full decodes it
// replaced, on a request with one unknown member.
func BenchmarkUnmarshal(b *testing.B) {
	data := []byte(`{"model":"demo-chat","seed":7,"stream":true,"user":"u-1","metadata":{"a":"b","c":[1,2,3]},"messages":[{"role":"user","content":"Hello there, how are you?"}]}`)
	known := jsonext.Fields[request]()
	known["messages"] = struct{}{}
	known["metadata"] = struct{}{}
	type plain request
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var r plain
			if _, err := jsonext.Unmarshal(data, &r, known); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var r plain
			if err := json.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
			_ = unknownReference(b, data, known)
		}
	})
}
