package embeddings_test

import (
	"encoding/json"
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

// FuzzHandler sends arbitrary bodies through the decoder, the validation
// and the demo backend: the handler never panics, and answers 200 with a
// list, or an error in the general shape.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"model":"demo-embedding","input":"hello"}`,
		`{"model":"demo-embedding","input":["a","b"],"dimensions":3,"encoding_format":"base64"}`,
		`{"model":"demo-embedding","input":[[1,2],[3]]}`,
		`{"model":"demo-embedding","input":[1,2,3]}`,
		`{"model":"demo-embedding","input":[["x"]]}`,
		`{"model":"demo-embedding","input":null}`,
		`[]`, `""`, `{"input":{}}`,
	} {
		f.Add([]byte(s))
	}
	h := embeddings.NewHandler(catalog(), demo.NewEmbeddingBackend())
	f.Fuzz(func(t *testing.T, body []byte) {
		w := servedtest.Do(h, "POST", "/v1/embeddings", "application/json", body)
		switch w.Code {
		case 200:
			var r reply
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || r.Object != "list" {
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
