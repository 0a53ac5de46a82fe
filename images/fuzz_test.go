package images_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

// FuzzHandler sends arbitrary bodies through the decoder, the validation
// and the demo backend: never a panic; a 200 carries images, anything
// else is an error in the general shape.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"model":"demo-image","prompt":"kite","size":"16x16","response_format":"b64_json"}`,
		`{"model":"demo-image","prompt":"kite","size":"17x16","n":2}`,
		`{"model":"demo-image","prompt":"kite","size":"0x16"}`,
		`{"model":"demo-image","prompt":"kite","size":"16x16","output_format":"jpeg","output_compression":0}`,
		`{"model":"demo-image","prompt":"","n":-1}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	h := newMux(demo.NewImageBackend())
	f.Fuzz(func(t *testing.T, body []byte) {
		// Keep the drawings small: the fuzzer is after the decoder.
		var probe struct{ Size string }
		if json.Unmarshal(body, &probe) == nil && len(probe.Size) > 5 {
			return
		}
		w := servedtest.Do(h, "POST", "/v1/images/generations", "application/json", body)
		switch w.Code {
		case 200:
			r := decode(t, w.Body.Bytes())
			if len(r.Data) == 0 {
				t.Fatalf("200 with %s", w.Body)
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

// FuzzFileName sends arbitrary file names to the file route: never a
// panic, and never a file for a name that the handler did not sign.
func FuzzFileName(f *testing.F) {
	for _, s := range []string{"a.b.png", "....", "x", "AAAA.AAAAAAAAAAAAAAAAAAAAAA.png"} {
		f.Add(s)
	}
	h := newMux(demo.NewImageBackend())
	f.Fuzz(func(t *testing.T, name string) {
		req := httptest.NewRequest("GET", "/", nil)
		req.URL.Path = "/v1/images/files/" + name
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code == 200 {
			t.Fatalf("served an unsigned name %q", name)
		}
	})
}
