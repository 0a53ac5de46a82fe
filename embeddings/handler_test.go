package embeddings_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
)

func catalog() models.Catalog {
	return models.NewMemoryCatalog(append(demo.AccessModels(), demo.TextModels()...)...)
}

type reply struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// vector decodes an embedding sent as floats or as base64.
func vector(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var fs []float32
	if raw[0] == '[' {
		require.NoError(t, json.Unmarshal(raw, &fs))
		return fs
	}
	var s string
	require.NoError(t, json.Unmarshal(raw, &s))
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	require.Zero(t, len(b)%4)
	for i := 0; i < len(b); i += 4 {
		fs = append(fs, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return fs
}

func TestHandlerGolden(t *testing.T) {
	t.Parallel()
	h := embeddings.NewHandler(catalog(), demo.NewEmbeddingBackend())
	tests := []struct{ name, body string }{
		{"one_string", `{"model":"demo-embedding","input":"The quick brown fox","dimensions":8}`},
		{"strings_base64", `{"model":"demo-embedding","input":["red apple","green apple"],"dimensions":4,"encoding_format":"base64"}`},
		{"token_arrays", `{"model":"demo-embedding","input":[[1,2,3],[4]],"dimensions":4,"encoding_format":"float"}`},
		{"token_ids", `{"model":"demo-embedding","input":[7,8,9],"dimensions":3}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/embeddings", tc.body)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, "application/json", w.Header().Get("Content-Type"))
			servedtest.Golden(t, filepath.Join("testdata", tc.name+".response.json"), w.Body.Bytes())
		})
	}
}

func TestHandlerReplies(t *testing.T) {
	t.Parallel()
	h := embeddings.NewHandler(catalog(), demo.NewEmbeddingBackend())
	tests := []struct {
		name   string
		body   string
		n      int
		dims   int
		tokens int
	}{
		{"DefaultDimensions", `{"model":"demo-embedding","input":"hello"}`, 1, demo.EmbeddingDimensions, 1},
		{"DimensionsHonoured", `{"model":"demo-embedding","input":["a b","c"],"dimensions":32}`, 2, 32, 3},
		{"Base64HasTheSameVectors", `{"model":"demo-embedding","input":["a b","c"],"dimensions":32,"encoding_format":"base64"}`, 2, 32, 3},
		{"TokensCountedOnePerId", `{"model":"demo-embedding","input":[[1,2],[3,4,5]],"dimensions":16}`, 2, 16, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/embeddings", tc.body)
			require.Equal(t, 200, w.Code, w.Body.String())
			var r reply
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r))
			require.Equal(t, "list", r.Object)
			require.Equal(t, demo.EmbeddingModel, r.Model)
			require.Len(t, r.Data, tc.n)
			require.Equal(t, tc.tokens, r.Usage.PromptTokens)
			require.Equal(t, tc.tokens, r.Usage.TotalTokens)
			for i, d := range r.Data {
				require.Equal(t, "embedding", d.Object)
				require.Equal(t, i, d.Index)
				v := vector(t, d.Embedding)
				require.Len(t, v, tc.dims)
				var norm float64
				for _, x := range v {
					norm += float64(x) * float64(x)
				}
				require.InDelta(t, 1, norm, 1e-5, "a unit vector")
			}
		})
	}
	t.Run("SharedWordsMeanCloserVectors", func(t *testing.T) {
		t.Parallel()
		w := servedtest.PostJSON(h, "/v1/embeddings", `{"model":"demo-embedding","input":["red apple pie","green apple pie","quantum physics lecture"]}`)
		require.Equal(t, 200, w.Code)
		var r reply
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r))
		dot := func(a, b []float32) (s float64) {
			for i := range a {
				s += float64(a[i]) * float64(b[i])
			}
			return s
		}
		a, b, c := vector(t, r.Data[0].Embedding), vector(t, r.Data[1].Embedding), vector(t, r.Data[2].Embedding)
		require.Greater(t, dot(a, b), dot(a, c))
	})
}

// brokenBackend returns what it is told to.
type brokenBackend struct {
	res *embeddings.Result
	err error
}

func (b brokenBackend) Embed(context.Context, *embeddings.Params) (*embeddings.Result, error) {
	return b.res, b.err
}

func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	demoH := embeddings.NewHandler(catalog(), demo.NewEmbeddingBackend())
	tests := []struct {
		name    string
		backend embeddings.Backend
		opts    []embeddings.Option
		ct      string
		body    string
		status  int
		code    string
		param   string
		msg     string
	}{
		{name: "MissingModel", body: `{"input":"x"}`, status: 400, code: "invalid_request_error", param: "model", msg: "model is required"},
		{name: "UnknownModel", body: `{"model":"nope","input":"x"}`, status: 404, code: "model_not_found", param: "model", msg: "nope"},
		{name: "ChatModel", body: `{"model":"demo-chat","input":"x"}`, status: 400, code: "invalid_request_error", param: "model", msg: `"embeddings"`},
		{name: "MissingInput", body: `{"model":"demo-embedding"}`, status: 400, code: "invalid_request_error", param: "input", msg: "input is required"},
		{name: "EmptyString", body: `{"model":"demo-embedding","input":""}`, status: 400, code: "invalid_request_error", param: "input", msg: "input[0] is empty"},
		{name: "EmptyArray", body: `{"model":"demo-embedding","input":[]}`, status: 400, code: "invalid_request_error", param: "input", msg: "empty array"},
		{name: "MixedArray", body: `{"model":"demo-embedding","input":["a",1]}`, status: 400, code: "invalid_request_error", param: "input", msg: "input[1] must be a string"},
		{name: "NumberInput", body: `{"model":"demo-embedding","input":42}`, status: 400, code: "invalid_request_error", param: "input", msg: "input must be a string"},
		{name: "NegativeToken", body: `{"model":"demo-embedding","input":[-1]}`, status: 400, code: "invalid_request_error", param: "input", msg: "out of range"},
		{name: "BadEncoding", body: `{"model":"demo-embedding","input":"x","encoding_format":"int8"}`, status: 400, code: "invalid_request_error", param: "encoding_format", msg: `"int8"`},
		{name: "NegativeDimensions", body: `{"model":"demo-embedding","input":"x","dimensions":-2}`, status: 400, code: "invalid_request_error", param: "dimensions", msg: "between 1 and 4096"},
		{name: "NotJSON", body: `{"model":`, status: 400, code: "invalid_request_error", msg: "not valid JSON"},
		{name: "WrongContentType", ct: "text/plain", body: `{}`, status: 400, code: "invalid_request_error", msg: "Content-Type"},
		{name: "TooLarge", opts: []embeddings.Option{endpoint.WithMaxRequestBytes(64)}, body: `{"model":"demo-embedding","input":"` + string(make([]byte, 100)) + `"}`, status: 400, code: "invalid_request_error", msg: "64 bytes limit"},
		{name: "BackendClientError", backend: brokenBackend{err: apierrors.InvalidRequest("dimensions", "too many dimensions")}, body: `{"model":"demo-embedding","input":"x"}`, status: 400, code: "invalid_request_error", param: "dimensions", msg: "too many dimensions"},
		{name: "BackendFailureIsHidden", backend: brokenBackend{err: errors.New("secret database path")}, body: `{"model":"demo-embedding","input":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendWrongCount", backend: brokenBackend{res: &embeddings.Result{}}, body: `{"model":"demo-embedding","input":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendWrongDimensions", backend: brokenBackend{res: &embeddings.Result{Embeddings: [][]float32{{1}}}}, body: `{"model":"demo-embedding","input":"x","dimensions":2}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendNaN", backend: brokenBackend{res: &embeddings.Result{Embeddings: [][]float32{{float32(math.NaN())}}}}, body: `{"model":"demo-embedding","input":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := demoH
			if tc.backend != nil || tc.opts != nil {
				b := tc.backend
				if b == nil {
					b = demo.NewEmbeddingBackend()
				}
				h = embeddings.NewHandler(catalog(), b, tc.opts...)
			}
			ct := tc.ct
			if ct == "" {
				ct = "application/json"
			}
			w := servedtest.Do(h, "POST", "/v1/embeddings", ct, []byte(tc.body))
			servedtest.RequireError(t, w, tc.status, tc.code, tc.param, tc.msg)
		})
	}
}

func TestHandlerChargesTheKey(t *testing.T) {
	t.Parallel()
	t.Run("SettlesThePromptTokensWithTheModel", func(t *testing.T) {
		t.Parallel()
		h, keys := servedtest.Keyed(t, embeddings.NewHandler(catalog(), demo.NewEmbeddingBackend()), auth.LimitedQuota(1000))
		w := servedtest.PostJSON(h, "/v1/embeddings", `{"model":"demo-embedding","input":["one two three","four"]}`)
		require.Equal(t, 200, w.Code, w.Body.String())
		s := keys.Settled()
		require.Len(t, s, 1)
		require.Equal(t, "key_test", s[0].KeyID)
		require.Equal(t, demo.EmbeddingModel, s[0].Model)
		require.Equal(t, int64(4), s[0].InputTokens)
		require.Equal(t, int64(0), s[0].OutputTokens)
		require.Equal(t, int64(4), s[0].Used)
		require.Positive(t, s[0].Reserved)
		require.Equal(t, auth.Quota{Remaining: 996, Used: 4}, keys.Quota(t))
	})
	t.Run("RecordsTheCostOfAPricedModel", func(t *testing.T) {
		t.Parallel()
		m := demo.AccessModels()[0]
		require.Equal(t, demo.EmbeddingModel, m.ID)
		m.Pricing = &models.Pricing{InputPerMillion: 2}
		h, keys := servedtest.Keyed(t, embeddings.NewHandler(models.NewMemoryCatalog(m), demo.NewEmbeddingBackend()), auth.LimitedQuota(1000))
		w := servedtest.PostJSON(h, "/v1/embeddings", `{"model":"demo-embedding","input":["one two three","four"]}`)
		require.Equal(t, 200, w.Code, w.Body.String())
		s := keys.Settled()
		require.Len(t, s, 1)
		require.InDelta(t, 4*2/1e6, s[0].CostUSD, 1e-12, "4 input tokens at 2 USD a million")
	})
	t.Run("AFailedRequestReleasesItsReservation", func(t *testing.T) {
		t.Parallel()
		h, keys := servedtest.Keyed(t, embeddings.NewHandler(catalog(), brokenBackend{err: errors.New("down")}), auth.LimitedQuota(1000))
		w := servedtest.PostJSON(h, "/v1/embeddings", `{"model":"demo-embedding","input":"x"}`)
		require.Equal(t, 500, w.Code)
		require.Len(t, keys.Settled(), 1)
		require.Equal(t, auth.Quota{Remaining: 1000}, keys.Quota(t))
	})
	t.Run("AnEmptyQuotaIsRefused", func(t *testing.T) {
		t.Parallel()
		h, _ := servedtest.Keyed(t, embeddings.NewHandler(catalog(), demo.NewEmbeddingBackend()), auth.LimitedQuota(0))
		w := servedtest.PostJSON(h, "/v1/embeddings", `{"model":"demo-embedding","input":"x"}`)
		servedtest.RequireError(t, w, 403, "insufficient_quota", "", "quota")
	})
}

func TestNewHandlerPanicsOnNil(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "embeddings: NewHandler: nil Backend", func() { embeddings.NewHandler(catalog(), nil) })
	require.PanicsWithValue(t, "embeddings: NewHandler: nil Catalog", func() { embeddings.NewHandler(nil, demo.NewEmbeddingBackend()) })
}
