package jsonext_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// scanValid reports whether data is one JSON value with white space
// around it, by ScanValue: what json.Valid reports.
func scanValid(data []byte) bool {
	i := jsonext.ScanValue(data, jsonext.SkipSpace(data, 0))
	return i >= 0 && jsonext.SkipSpace(data, i) == len(data)
}

var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`,
	` { "a" : [ 1 , { "b" : null } ] , "c" : "\u00e9\n\"\\\/" } `,
	`{"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"hé"},"finish_reason":null}]}`,
	"\"\xff\xfe\"", // invalid UTF-8 is valid JSON to json.Valid
	strings.Repeat("[", 512) + strings.Repeat("]", 512),

	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{1:2}`, `[1 2]`,
	`01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\tb\"", `"abc`, `"\`, `{"a":1}}`, `[1]]`, `{"a":1} x`, `1 2`,
}

func TestScanValueAgreesWithValid(t *testing.T) {
	t.Parallel()
	for _, c := range validCases {
		if got, want := scanValid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("ScanValue on %q: valid %v, json.Valid says %v", c, got, want)
		}
	}
}

// checkScanValueOnce checks that ScanValueOnce accepts what ScanValue
// accepts, but values that DuplicateMember finds a member twice in, and
// no value that it finds one in.
func checkScanValueOnce(t *testing.T, data []byte) {
	t.Helper()
	i := jsonext.SkipSpace(data, 0)
	once := jsonext.ScanValueOnce(data, i)
	if once >= 0 {
		require.Equal(t, jsonext.ScanValue(data, i), once, "%q", data)
		require.Empty(t, jsonext.DuplicateMember(data[:once], nil), "ScanValueOnce accepted %q", data)
		return
	}
	if end := jsonext.ScanValue(data, i); end >= 0 && jsonext.DuplicateMember(data[:end], nil) != "" {
		return
	} else if end >= 0 {
		require.True(t, strings.Contains(string(data[:end]), `\`) || !utf8.Valid(data[:end]),
			"ScanValueOnce refused %q, which names no member twice and has neither an escape nor invalid UTF-8", data)
	}
}

func TestScanValueOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}`, true},
		{`{"a":1,"a":2}`, false},
		{`[1,{"x":{"y":[],"y":[]}}]`, false},
		{`{"a":1,"A":2,"é":1}`, true},
		{`{"a":1,"\u0061":2}`, false}, // an escape: not compared
		{`{"a":`, false},
		{`"{\"a\":1,\"a\":1}"`, true},
	} {
		got := jsonext.ScanValueOnce([]byte(tc.in), 0) >= 0
		require.Equal(t, tc.want, got, tc.in)
		checkScanValueOnce(t, []byte(tc.in))
	}
}

func TestScanValueDepth(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 513) + strings.Repeat("]", 513)
	if scanValid([]byte(deep)) {
		t.Error("ScanValue followed 513 levels of nesting; the limit is 512")
	}
}

func TestScanStringEnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int
	}{
		{`"abc",`, 5},
		{`"a\"b"x`, 6},
		{`"\u00e9"`, 8},
		{`"\u00e9`, -1},
		{`abc`, -1},
	} {
		if got := jsonext.ScanString([]byte(tc.in), 0); got != tc.want {
			t.Errorf("ScanString(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// FuzzScanValue checks ScanValue against json.Valid.
func FuzzScanValue(f *testing.F) {
	for _, c := range validCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if strings.Count(data, "[")+strings.Count(data, "{") > 500 {
			return // the depth limit, tested above
		}
		if got, want := scanValid([]byte(data)), json.Valid([]byte(data)); got != want {
			t.Fatalf("ScanValue on %q: valid %v, json.Valid says %v", data, got, want)
		}
		checkScanValueOnce(t, []byte(data))
	})
}

// BenchmarkScanValue measures ScanValue beside json.Valid on a chat
// completion chunk, the relay's most frequent document.
func BenchmarkScanValue(b *testing.B) {
	chunk := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":" the quick brown fox"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	b.Run("ScanValue", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			if !scanValid(chunk) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		for b.Loop() {
			if !json.Valid(chunk) {
				b.Fatal("invalid")
			}
		}
	})
}

func TestCursor(t *testing.T) {
	t.Parallel()
	c := jsonext.Cursor{Data: []byte(` {"a": [1, -20, null], "bé": 1, "c": "x\n"} `)}
	var keys []string
	var ints []int
	ok := c.Object(func(key []byte) bool {
		keys = append(keys, string(key))
		if string(key) != "a" {
			_, ok := c.Skip()
			return ok
		}
		return c.Array(func() bool {
			if c.Null() {
				return true
			}
			n, ok := c.Int()
			ints = append(ints, n)
			return ok
		})
	})
	if ok || len(keys) != 1 || len(ints) != 2 || ints[1] != -20 {
		t.Errorf("Object took a non-ASCII key: ok %v, keys %q, ints %v", ok, keys, ints)
	}

	c = jsonext.Cursor{Data: []byte(`{"a":{"b":"c\u00e9"},"d":1.5}`)}
	var starts []int
	ok = c.Object(func(key []byte) bool {
		starts = append(starts, c.MemberStart)
		if string(key) == "d" {
			_, ok := c.Int()
			return ok
		}
		return c.Object(func([]byte) bool {
			inner, plain, ok := c.Quoted()
			return ok && !plain && string(inner) == `c\u00e9`
		})
	})
	if ok || len(starts) != 2 || starts[0] != 1 || starts[1] != 21 {
		t.Errorf("Int took 1.5, or MemberStart is off: ok %v, starts %v", ok, starts)
	}
	if !(&jsonext.Cursor{Data: []byte(" \n")}).End() {
		t.Error("End: white space is the end")
	}
}

// BenchmarkScanValueOnce compares ScanValueOnce with ScanValue on a
// tool's parameters, the raw value that the chat decoder skips most.
func BenchmarkScanValueOnce(b *testing.B) {
	schema := []byte(`{"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "date": {"type": "string", "format": "date"}}, "required": ["from", "to", "date"]}`)
	for _, tc := range []struct {
		name string
		scan func([]byte, int) int
	}{{"ScanValue", jsonext.ScanValue}, {"ScanValueOnce", jsonext.ScanValueOnce}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(schema)))
			for b.Loop() {
				if tc.scan(schema, 0) != len(schema) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
