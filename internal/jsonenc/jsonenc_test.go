package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

// marshal encodes s as encoding/json does without HTML escaping.
func marshal(t *testing.T, s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func FuzzAppendStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "tab\tnl\n\x00\x1f", "<html>&", "\u2028\u2029", "bad \xff utf8", "é漢字🙂"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, marshal(t, s), string(jsonenc.AppendString(nil, s)))
	})
}

func TestAppendMembers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, want string }{
		{`{"b":1,"c":[2]}`, `{"a":0,"b":1,"c":[2]}`},
		{`{}`, `{"a":0}`},
	} {
		got := string(append(jsonenc.AppendMembers([]byte(`{"a":0`), []byte(tc.raw)), '}'))
		if got != tc.want {
			t.Errorf("AppendMembers(%s) = %s, want %s", tc.raw, got, tc.want)
		}
		if !jsonenc.IsObject([]byte(tc.raw)) {
			t.Errorf("IsObject(%s) = false", tc.raw)
		}
	}
	if jsonenc.IsObject([]byte(`[]`)) || jsonenc.IsObject([]byte(`{`)) {
		t.Error("IsObject took something that is not an object")
	}
}
