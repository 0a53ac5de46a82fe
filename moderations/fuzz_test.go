package moderations_test

import (
	"encoding/json"
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/moderations"
)

// FuzzHandler sends arbitrary bodies through the decoder, the validation
// and the demo backend: never a panic; a 200 carries one result per
// input with every category, anything else is an error in the general
// shape.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"model":"demo-moderation","input":"kill"}`,
		`{"model":"demo-moderation","input":["a","b"]}`,
		`{"model":"demo-moderation","input":[{"type":"text","text":"x"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]}`,
		`{"model":"demo-moderation","input":[{"type":"text"}]}`, `{"input":null}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	h := moderations.NewHandler(catalog(), demo.NewModerationBackend())
	f.Fuzz(func(t *testing.T, body []byte) {
		w := servedtest.Do(h, "POST", "/v1/moderations", "application/json", body)
		switch w.Code {
		case 200:
			var r reply
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || len(r.Results) == 0 {
				t.Fatalf("200 with %s", w.Body)
			}
			for _, res := range r.Results {
				if len(res.Categories) != len(moderations.Categories()) || len(res.Applied) != len(moderations.Categories()) {
					t.Fatalf("categories missing: %s", w.Body)
				}
			}
		case 400, 404:
			var e servedtest.ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
				t.Fatalf("%d with %s", w.Code, w.Body)
			}
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
	})
}
