package rerank_test

import (
	"encoding/json"
	"testing"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/rerank"
)

// FuzzHandler sends arbitrary bodies through the decoder, the validation
// and the demo backend: never a panic; a 200 ranks documents of the
// request, best first; anything else is an error in the general shape.
func FuzzHandler(f *testing.F) {
	for _, s := range []string{
		`{"model":"demo-rerank","query":"q","documents":["a","q"]}`,
		`{"model":"demo-rerank","query":"q","documents":[{"text":"a"}],"top_n":1,"return_documents":false}`,
		`{"model":"demo-rerank","query":"","documents":null}`, `[]`, `{"documents":[[]]}`,
	} {
		f.Add([]byte(s))
	}
	h := rerank.NewHandler(catalog(), demo.NewRerankBackend())
	f.Fuzz(func(t *testing.T, body []byte) {
		w := servedtest.Do(h, "POST", "/v1/rerank", "application/json", body)
		switch w.Code {
		case 200:
			var r rerank.Reply
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || len(r.Results) == 0 {
				t.Fatalf("200 with %s", w.Body)
			}
			for i := 1; i < len(r.Results); i++ {
				if r.Results[i].RelevanceScore > r.Results[i-1].RelevanceScore {
					t.Fatalf("not ranked: %s", w.Body)
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
