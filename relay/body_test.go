package relay

import (
	"encoding/json"
	"testing"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// FuzzRequestBody: whatever JSON object a client sent, the upstream body
// is a JSON object with the upstream's model, every other member as sent,
// and, for a stream, stream true and stream_options.include_usage true
// beside the client's other stream options; or a clear error.
func FuzzRequestBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[],"seed":1}`,
		`{"model":"m","stream_options":{"include_usage":false,"x":[1]}}`,
		`{"model":"m","stream_options":null}`,
		`{"model":"m","stream_options":3}`,
		`{"a":{"b":"\u00e9"},"model":1}`,
		`[]`,
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, raw string, stream bool) {
		var in map[string]json.RawMessage
		if json.Unmarshal([]byte(raw), &in) != nil || in == nil {
			return // the handlers only pass JSON objects
		}
		body, err := parseRequestBody([]byte(raw), nil)
		if err != nil {
			t.Fatalf("parse %q: %v", raw, err)
		}
		if stream {
			if err := body.forStream(); err != nil {
				if !apierrors.Has(err) {
					t.Fatalf("forStream %q: %v", raw, err)
				}
				return
			}
		}
		out, err := body.encode("up-model")
		if err != nil {
			t.Fatalf("encode %q: %v", raw, err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q gave invalid JSON %q: %v", raw, out, err)
		}
		if string(got["model"]) != `"up-model"` {
			t.Fatalf("model is %s", got["model"])
		}
		for k, v := range in {
			switch k {
			case "model":
				continue
			case "stream", "stream_options":
				if stream {
					continue
				}
			}
			if !sameJSON(v, got[k]) {
				t.Fatalf("member %q changed: %s → %s", k, v, got[k])
			}
		}
		if stream {
			var opts struct {
				IncludeUsage bool `json:"include_usage"`
			}
			if string(got["stream"]) != "true" || json.Unmarshal(got["stream_options"], &opts) != nil || !opts.IncludeUsage {
				t.Fatalf("stream members: %s %s", got["stream"], got["stream_options"])
			}
		}
	})
}

// sameJSON reports whether two JSON values are equal as values.
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ea, _ := json.Marshal(va)
	eb, _ := json.Marshal(vb)
	return string(ea) == string(eb)
}
