package moderations_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/moderations"
)

func catalog() models.Catalog {
	return models.NewMemoryCatalog(append(demo.AccessModels(), demo.TextModels()...)...)
}

var randomID = regexp.MustCompile(`"modr-[A-Z2-7]{26}"`)

type reply struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Results []struct {
		Flagged        bool                `json:"flagged"`
		Categories     map[string]bool     `json:"categories"`
		CategoryScores map[string]float64  `json:"category_scores"`
		Applied        map[string][]string `json:"category_applied_input_types"`
	} `json:"results"`
}

func TestHandlerGolden(t *testing.T) {
	t.Parallel()
	h := moderations.NewHandler(catalog(), demo.NewModerationBackend())
	tests := []struct{ name, body string }{
		{"clean_string", `{"model":"demo-moderation","input":"What a lovely day."}`},
		{"flagged_strings", `{"model":"demo-moderation","input":["I will threaten you","kill the gore"]}`},
		{"multimodal", `{"model":"demo-moderation","input":[{"type":"text","text":"so hopeless"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/moderations", tc.body)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Regexp(t, randomID, w.Body.String())
			got := randomID.ReplaceAll(w.Body.Bytes(), []byte(`"modr-*"`))
			servedtest.Golden(t, filepath.Join("testdata", tc.name+".response.json"), got)
		})
	}
}

func TestHandlerFlagsEveryTriggerWord(t *testing.T) {
	t.Parallel()
	h := moderations.NewHandler(catalog(), demo.NewModerationBackend())
	for word, cat := range demo.ModerationTriggers() {
		t.Run(word, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/moderations", `{"model":"demo-moderation","input":"Well, `+word+`!"}`)
			require.Equal(t, 200, w.Code, w.Body.String())
			var r reply
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r))
			require.Len(t, r.Results, 1)
			res := r.Results[0]
			require.True(t, res.Flagged)
			require.Len(t, res.Categories, len(moderations.Categories()))
			require.Len(t, res.CategoryScores, len(moderations.Categories()))
			require.Len(t, res.Applied, len(moderations.Categories()))
			for _, c := range moderations.Categories() {
				parent, _, _ := cutSlash(cat)
				want := c == cat || c == parent
				require.Equal(t, want, res.Categories[c], c)
				require.Equal(t, want, res.CategoryScores[c] >= 0.5, c)
				require.Equal(t, []string{"text"}, res.Applied[c])
			}
		})
	}
}

func cutSlash(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

type brokenBackend struct {
	res *moderations.Result
	err error
}

func (b brokenBackend) Moderate(context.Context, *moderations.Params) (*moderations.Result, error) {
	return b.res, b.err
}

func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		backend moderations.Backend
		opts    []moderations.Option
		body    string
		status  int
		code    string
		param   string
		msg     string
	}{
		{name: "MissingModel", body: `{"input":"x"}`, status: 400, code: "invalid_request_error", param: "model", msg: "model is required"},
		{name: "UnknownModel", body: `{"model":"omni-moderation-latest","input":"x"}`, status: 404, code: "model_not_found", param: "model", msg: "omni-moderation-latest"},
		{name: "EmbeddingModel", body: `{"model":"demo-embedding","input":"x"}`, status: 400, code: "invalid_request_error", param: "model", msg: `"moderation"`},
		{name: "MissingInput", body: `{"model":"demo-moderation"}`, status: 400, code: "invalid_request_error", param: "input", msg: "input is required"},
		{name: "EmptyArray", body: `{"model":"demo-moderation","input":[]}`, status: 400, code: "invalid_request_error", param: "input", msg: "empty array"},
		{name: "BadPart", body: `{"model":"demo-moderation","input":[{"type":"audio"}]}`, status: 400, code: "invalid_request_error", param: "input", msg: "input[0]"},
		{name: "BadImageURL", body: `{"model":"demo-moderation","input":[{"type":"image_url","image_url":{"url":"ftp://x"}}]}`, status: 400, code: "invalid_request_error", param: "input", msg: "image_url.url"},
		{name: "ObjectInput", body: `{"model":"demo-moderation","input":{}}`, status: 400, code: "invalid_request_error", param: "input", msg: "input must be"},
		{name: "TooLarge", opts: []moderations.Option{endpoint.WithMaxRequestBytes(32)}, body: `{"model":"demo-moderation","input":"0123456789012345678901234567890123456789"}`, status: 400, code: "invalid_request_error", msg: "32 bytes limit"},
		{name: "BackendFailure", backend: brokenBackend{err: errors.New("boom")}, body: `{"model":"demo-moderation","input":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendWrongCount", backend: brokenBackend{res: &moderations.Result{}}, body: `{"model":"demo-moderation","input":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "BackendUnknownCategory", backend: brokenBackend{res: &moderations.Result{Results: []moderations.Classification{{Flagged: []string{"spam"}}}}}, body: `{"model":"demo-moderation","input":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.backend
			if b == nil {
				b = demo.NewModerationBackend()
			}
			w := servedtest.PostJSON(moderations.NewHandler(catalog(), b, tc.opts...), "/v1/moderations", tc.body)
			servedtest.RequireError(t, w, tc.status, tc.code, tc.param, tc.msg)
		})
	}
}

func TestHandlerChargesTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, moderations.NewHandler(catalog(), demo.NewModerationBackend()), auth.UnlimitedQuota())
	w := servedtest.PostJSON(h, "/v1/moderations", `{"model":"demo-moderation","input":["one two","three"]}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	s := keys.Settled()
	require.Len(t, s, 1)
	require.Equal(t, demo.ModerationModel, s[0].Model)
	require.Equal(t, int64(3), s[0].InputTokens)
	require.Equal(t, int64(3), s[0].Used)
}

func TestNewHandlerPanicsOnNil(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "moderations: NewHandler: nil Backend", func() { moderations.NewHandler(catalog(), nil) })
	require.PanicsWithValue(t, "moderations: NewHandler: nil Catalog", func() { moderations.NewHandler(nil, demo.NewModerationBackend()) })
}
