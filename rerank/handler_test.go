package rerank_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/rerank"
)

func catalog() models.Catalog {
	return models.NewMemoryCatalog(append(demo.AccessModels(), demo.TextModels()...)...)
}

var randomID = regexp.MustCompile(`"rerank-[A-Z2-7]{26}"`)

func TestHandlerGolden(t *testing.T) {
	t.Parallel()
	h := rerank.NewHandler(catalog(), demo.NewRerankBackend())
	docs := `["The capital of France is Paris.","Berlin is the capital of Germany.","Cats sleep a lot."]`
	tests := []struct{ name, body string }{
		{"documents", `{"model":"demo-rerank","query":"What is the capital of France?","documents":` + docs + `}`},
		{"top_n_without_documents", `{"model":"demo-rerank","query":"capital of Germany","documents":` + docs + `,"top_n":2,"return_documents":false}`},
		{"object_documents", `{"model":"demo-rerank","query":"cats","documents":[{"text":"Dogs bark."},{"text":"Cats purr.","id":"d2"}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/rerank", tc.body)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Regexp(t, randomID, w.Body.String())
			servedtest.Golden(t, filepath.Join("testdata", tc.name+".response.json"), randomID.ReplaceAll(w.Body.Bytes(), []byte(`"rerank-*"`)))
		})
	}
}

func TestHandlerRanks(t *testing.T) {
	t.Parallel()
	h := rerank.NewHandler(catalog(), demo.NewRerankBackend())
	tests := []struct {
		name      string
		body      string
		wantOrder []int
		withDocs  bool
	}{
		{"BestFirst", `{"model":"demo-rerank","query":"red apple","documents":["green pear","red apple","apple"]}`, []int{1, 2, 0}, true},
		{"TiesKeepTheDocumentsOrder", `{"model":"demo-rerank","query":"zzz","documents":["a","b","c"]}`, []int{0, 1, 2}, true},
		{"TopN", `{"model":"demo-rerank","query":"red apple","documents":["green pear","red apple","apple"],"top_n":1}`, []int{1}, true},
		{"TopNOverTheDocuments", `{"model":"demo-rerank","query":"red apple","documents":["green pear","red apple"],"top_n":9}`, []int{1, 0}, true},
		{"NoDocuments", `{"model":"demo-rerank","query":"red apple","documents":["green pear","red apple"],"return_documents":false}`, []int{1, 0}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/rerank", tc.body)
			require.Equal(t, 200, w.Code, w.Body.String())
			var r rerank.Reply
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r))
			var order []int
			for i, res := range r.Results {
				order = append(order, res.Index)
				require.Equal(t, tc.withDocs, res.Document != nil)
				if i > 0 {
					require.LessOrEqual(t, res.RelevanceScore, r.Results[i-1].RelevanceScore)
				}
			}
			require.Equal(t, tc.wantOrder, order)
			require.Positive(t, r.Usage.TotalTokens)
		})
	}
}

type brokenBackend struct {
	res *rerank.Result
	err error
}

func (b brokenBackend) Rerank(context.Context, *rerank.Params) (*rerank.Result, error) {
	return b.res, b.err
}

func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		backend rerank.Backend
		body    string
		status  int
		code    string
		param   string
		msg     string
	}{
		{name: "MissingModel", body: `{"query":"q","documents":["a"]}`, status: 400, code: "invalid_request_error", param: "model", msg: "model is required"},
		{name: "ChatModel", body: `{"model":"demo-chat","query":"q","documents":["a"]}`, status: 400, code: "invalid_request_error", param: "model", msg: `"rerank"`},
		{name: "UnknownModel", body: `{"model":"x","query":"q","documents":["a"]}`, status: 404, code: "model_not_found", param: "model", msg: `x`},
		{name: "MissingQuery", body: `{"model":"demo-rerank","documents":["a"]}`, status: 400, code: "invalid_request_error", param: "query", msg: "query is required"},
		{name: "MissingDocuments", body: `{"model":"demo-rerank","query":"q"}`, status: 400, code: "invalid_request_error", param: "documents", msg: "documents is required"},
		{name: "NoDocuments", body: `{"model":"demo-rerank","query":"q","documents":[]}`, status: 400, code: "invalid_request_error", param: "documents", msg: "at least one"},
		{name: "BadDocument", body: `{"model":"demo-rerank","query":"q","documents":[{"title":"x"}]}`, status: 400, code: "invalid_request_error", param: "documents", msg: "documents[0]"},
		{name: "NumberDocument", body: `{"model":"demo-rerank","query":"q","documents":[1]}`, status: 400, code: "invalid_request_error", param: "documents", msg: "documents[0]"},
		{name: "NegativeTopN", body: `{"model":"demo-rerank","query":"q","documents":["a"],"top_n":-1}`, status: 400, code: "invalid_request_error", param: "top_n", msg: "top_n"},
		{name: "BackendFailure", backend: brokenBackend{err: errors.New("boom")}, body: `{"model":"demo-rerank","query":"q","documents":["a"]}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendWrongCount", backend: brokenBackend{res: &rerank.Result{Scores: []float64{1, 2}}}, body: `{"model":"demo-rerank","query":"q","documents":["a"]}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendNaN", backend: brokenBackend{res: &rerank.Result{Scores: []float64{math.NaN()}}}, body: `{"model":"demo-rerank","query":"q","documents":["a"]}`, status: 500, code: "internal_server_error", msg: "internal server error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.backend
			if b == nil {
				b = demo.NewRerankBackend()
			}
			w := servedtest.PostJSON(rerank.NewHandler(catalog(), b), "/v1/rerank", tc.body)
			servedtest.RequireError(t, w, tc.status, tc.code, tc.param, tc.msg)
		})
	}
}

func TestHandlerChargesTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, rerank.NewHandler(catalog(), demo.NewRerankBackend()), auth.UnlimitedQuota())
	w := servedtest.PostJSON(h, "/v1/rerank", `{"model":"demo-rerank","query":"a b","documents":["c","d e"]}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	s := keys.Settled()
	require.Len(t, s, 1)
	require.Equal(t, demo.RerankModel, s[0].Model)
	require.Equal(t, int64(2+1+2+2), s[0].InputTokens)
}

func TestNewHandlerPanicsOnNil(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "rerank: NewHandler: nil Backend", func() { rerank.NewHandler(catalog(), nil) })
}
