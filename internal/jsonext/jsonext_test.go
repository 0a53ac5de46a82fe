package jsonext_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

type inner struct {
	Seed int `json:"seed,omitempty"`
}

type request struct {
	inner
	Model  string                     `json:"model"`
	Stream bool                       `json:"stream,omitempty"`
	Skip   string                     `json:"-"`
	Extra  map[string]json.RawMessage `json:"-"`
}

var requestFields = jsonext.Fields[request]()

func (r *request) UnmarshalJSON(b []byte) error {
	type plain request
	var err error
	r.Extra, err = jsonext.Unmarshal(b, (*plain)(r), requestFields)
	return err
}

func (r request) MarshalJSON() ([]byte, error) {
	type plain request
	return jsonext.Marshal(plain(r), r.Extra)
}

func TestFields(t *testing.T) {
	t.Parallel()
	require.Equal(t, jsonext.FieldSet{"seed": {}, "model": {}, "stream": {}}, requestFields)
}

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	in := `{"model":"m","user":"u-1","logprobs":true,"seed":7,"reasoning_effort":{"a":[1, 2]}}`
	var r request
	require.NoError(t, json.Unmarshal([]byte(in), &r))
	require.Equal(t, "m", r.Model)
	require.Equal(t, 7, r.Seed)
	require.Len(t, r.Extra, 3)

	out, err := json.Marshal(r)
	require.NoError(t, err)
	require.JSONEq(t, in, string(out))
	require.Equal(t, `{"seed":7,"model":"m","logprobs":true,"reasoning_effort":{"a":[1,2]},"user":"u-1"}`, string(out), "extras sorted and compacted")
}

func TestNoExtras(t *testing.T) {
	t.Parallel()
	var r request
	require.NoError(t, json.Unmarshal([]byte(`{"model":"m"}`), &r))
	require.Nil(t, r.Extra)
	out, err := json.Marshal(r)
	require.NoError(t, err)
	require.Equal(t, `{"model":"m"}`, string(out))
}

func TestModelledFieldWinsOverExtra(t *testing.T) {
	t.Parallel()
	r := request{Model: "m", Extra: map[string]json.RawMessage{"model": json.RawMessage(`"other"`)}}
	out, err := json.Marshal(r)
	require.NoError(t, err)
	require.Equal(t, `{"model":"m"}`, string(out))
}

func TestInvalidExtraIsAnError(t *testing.T) {
	t.Parallel()
	r := request{Model: "m", Extra: map[string]json.RawMessage{"x": json.RawMessage(`{`)}}
	_, err := json.Marshal(r)
	require.Error(t, err)
}
