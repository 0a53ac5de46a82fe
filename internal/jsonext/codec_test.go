package jsonext_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

type part struct {
	Type  string                     `json:"type"`
	Text  string                     `json:"text,omitempty"`
	Skip  string                     `json:"-"`
	Extra map[string]json.RawMessage `json:"-"`
}

var partJSON = jsonext.NewCodec[part]()

func (p *part) UnmarshalJSON(b []byte) error { return partJSON.Decode(b, p) }

func (p part) MarshalJSON() ([]byte, error) { return partJSON.Encode(&p) }

func TestCodecRoundTripKeepsUnknownMembers(t *testing.T) {
	t.Parallel()
	require.Equal(t, jsonext.FieldSet{"type": {}, "text": {}}, partJSON.Known())
	in := `[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}},{"type":"image"}]`
	var parts []part
	require.NoError(t, json.Unmarshal([]byte(in), &parts))
	require.Equal(t, "hi", parts[0].Text)
	require.Equal(t, map[string]json.RawMessage{"cache_control": json.RawMessage(`{"type":"ephemeral"}`)}, parts[0].Extra)
	require.Nil(t, parts[1].Extra)

	out, err := json.Marshal(parts)
	require.NoError(t, err)
	require.JSONEq(t, in, string(out))
}

func TestCodecDecodeErrorClearsExtra(t *testing.T) {
	t.Parallel()
	p := part{Extra: map[string]json.RawMessage{"x": json.RawMessage(`1`)}}
	var te *json.UnmarshalTypeError
	require.ErrorAs(t, p.UnmarshalJSON([]byte(`{"type":1}`)), &te)
	require.Equal(t, "type", te.Field)
	require.Nil(t, p.Extra)
}

func TestNewCodecPanicsOnATypeItCannotServe(t *testing.T) {
	t.Parallel()
	type noExtra struct {
		Type string `json:"type"`
	}
	type unexported struct {
		typ   string
		Extra map[string]json.RawMessage `json:"-"`
	}
	type embedded struct {
		part
		Extra map[string]json.RawMessage `json:"-"`
	}
	require.PanicsWithValue(t, "jsonext: NewCodec: jsonext_test.noExtra has no Extra field of type map[string]json.RawMessage", func() { jsonext.NewCodec[noExtra]() })
	require.Panics(t, func() { jsonext.NewCodec[unexported]() })
	require.Panics(t, func() { jsonext.NewCodec[embedded]() })
	require.Panics(t, func() { jsonext.NewCodec[string]() })
}

func TestStrings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
		ok   bool
	}{
		{name: "null", in: `null`, ok: true},
		{name: "nothing", in: ``, ok: true},
		{name: "string", in: ` "a"`, want: []string{"a"}, ok: true},
		{name: "array", in: `["a","b"]`, want: []string{"a", "b"}, ok: true},
		{name: "empty array", in: `[]`, want: []string{}, ok: true},
		{name: "array of numbers", in: `[1]`, want: []string{"kept"}},
		{name: "number", in: `1`, want: []string{"kept"}},
		{name: "object", in: `{}`, want: []string{"kept"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			list := []string{"kept"}
			require.Equal(t, tc.ok, jsonext.Strings([]byte(tc.in), &list))
			require.Equal(t, tc.want, list)
		})
	}
}
