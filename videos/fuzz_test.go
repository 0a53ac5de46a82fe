package videos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/videos"
)

// requireClientError fails unless err is a 400 *apierrors.Error: a decoder
// must answer bad input with a clear client error, never anything else.
func requireClientError(t *testing.T, err error) {
	t.Helper()
	var e *apierrors.Error
	if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message == "" {
		t.Fatalf("want a 400 *apierrors.Error, got %T %v", err, err)
	}
}

func FuzzDecodeCreateJSON(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","prompt":"p","size":"1280x720","seconds":8}`,
		`{"model":"m","prompt":"p","seconds":"12","input_reference":{"image_url":"https://e.com/a.png"},"user":"x"}`,
		`{"input_reference":"https://e.com/a.png","seconds":null}`,
		`{"seconds":1e400}`, `{"seconds":true}`, `{"input_reference":12}`, `[]`, `"x"`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := videos.DecodeCreateJSON(body)
		if err != nil {
			requireClientError(t, err)
			return
		}
		// What decodes encodes, and decodes again to the same request.
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", body, err)
		}
		req2, err := videos.DecodeCreateJSON(again)
		if err != nil {
			t.Fatalf("decoding the re-encoded %s: %v", again, err)
		}
		third, _ := json.Marshal(req2)
		if !bytes.Equal(again, third) {
			t.Fatalf("round trip changed the request:\n%s\n%s", again, third)
		}
	})
}

func FuzzDecodeMultimodalJSON(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","mode":"i2v","assets":[{"role":"image","url":"https://e.com/a.png"}],"duration_sec":5,"resolution":"720p","aspect_ratio":"16:9","prompt_optimize":true,"gen_tier":"pro"}`,
		`{"model":"m","mode":"t2v","prompt":"p","extra":{"a":[1,2]}}`,
		`{"assets":[{"role":"image","x":1}]}`, `{"duration_sec":"5"}`, `{"assets":{}}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := videos.DecodeMultimodalJSON(body)
		if err != nil {
			requireClientError(t, err)
			return
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("re-encoding %q: %v", body, err)
		}
		if _, err := videos.DecodeMultimodalJSON(again); err != nil {
			t.Fatalf("decoding the re-encoded %s: %v", again, err)
		}
	})
}

const fuzzBoundary = "fuzzboundary"

func FuzzDecodeCreateMultipart(f *testing.F) {
	seed := func(fields ...formField) {
		var buf bytes.Buffer
		body, _ := multipartBodyWith(fuzzBoundary, fields...)
		buf.Write(body)
		f.Add(buf.Bytes())
	}
	seed(formField{name: "model", value: "m"}, formField{name: "prompt", value: "p"}, formField{name: "seconds", value: "8"})
	seed(formField{name: "prompt", value: "p"}, formField{name: "input_reference", value: string(pngImage), filename: "a.png"})
	seed(formField{name: "input_reference[image_url]", value: "https://e.com/a.png"}, formField{name: "x", value: "y"})
	seed(formField{name: "input_reference", value: `{"image_url":"https://e.com/a.png"}`})
	seed(formField{name: "prompt", value: "a"}, formField{name: "prompt", value: "b"})
	f.Add([]byte("--" + fuzzBoundary + "--\r\n"))
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := videos.DecodeCreateMultipart(bytes.NewReader(body), fuzzBoundary, 4096)
		if err != nil {
			requireClientError(t, err)
			return
		}
		if _, err := json.Marshal(req); err != nil {
			t.Fatalf("encoding the decoded request: %v", err)
		}
		if ref := req.InputReference; ref != nil && len(ref.ImageURL) > 5 && ref.ImageURL[:5] == "data:" {
			if _, _, err := videos.DecodeDataURI(ref.ImageURL); err != nil {
				t.Fatalf("an uploaded file became a bad data URI: %v", err)
			}
		}
	})
}

// FuzzCreateHandler sends the body to both create routes: whatever it is,
// the answer is 200 with a task or 400 in the flat shape.
func FuzzCreateHandler(f *testing.F) {
	for _, s := range []string{
		`{"model":"first-kind","prompt":"p","size":"1280x720","seconds":8}`,
		`{"model":"first-kind","prompt":"p","size":"1280x720","input_reference":{"image_url":"data:image/png;base64,iVBORw0KGgo="}}`,
		`{"model":"multi","mode":"i2v","assets":[{"role":"image","url":"data:image/png;base64,AAAA"}]}`,
		`{"model":"multi","mode":"first_last_frame","assets":[{"role":"first_frame","url":"https://e.com/1"},{"role":"last_frame","url":"https://e.com/2"}],"aspect_ratio":"1:100","resolution":"1080p","duration_sec":1e300}`,
		`{"model":"t2v-only","mode":"t2v","prompt":"p","duration_sec":5}`,
	} {
		f.Add([]byte(s))
	}
	h := videos.NewHandler(videos.NewMemoryStore(nil), testCatalog(), videos.NewMemoryContentStore(nil),
		videos.WithOwner(func(context.Context) (string, bool) { return "fuzz", true }))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1/videos", "/v1/vendorai/videos"} {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			var m map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
				t.Fatalf("%s: reply is not JSON: %q", path, rec.Body)
			}
			switch rec.Code {
			case http.StatusOK:
				if m["status"] != "queued" {
					t.Fatalf("%s: 200 without a queued task: %s", path, rec.Body)
				}
			case http.StatusBadRequest:
				if m["code"] == nil || m["message"] == "" || m["error"] == nil {
					t.Fatalf("%s: 400 not in the flat shape: %s", path, rec.Body)
				}
			default:
				t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
			}
		}
	})
}
