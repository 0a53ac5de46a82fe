package models_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/models/modelstest"
)

var update = flag.Bool("update", false, "update .golden files")

// testModels is the catalogue of the handler tests: the suite's fixtures
// and a bare model with only the required fields.
func testModels() []models.Model {
	return append(modelstest.Fixtures(), models.Model{
		ID:            "bare",
		EndpointTypes: []models.EndpointType{models.CompatResponse},
	})
}

// failingCatalog fails every call with err.
type failingCatalog struct{ err error }

func (c failingCatalog) Get(context.Context, string) (*models.Model, error) { return nil, c.err }
func (c failingCatalog) List(context.Context) ([]models.Model, error)       { return nil, c.err }

// allowedKey carries the allowed model ids in the request context, the way
// the auth middleware carries its principal.
type allowedKey struct{}

func allowFromContext(ctx context.Context, id string) bool {
	allowed, ok := ctx.Value(allowedKey{}).(map[string]bool)
	return !ok || allowed[id]
}

func withAllowed(ids ...string) func(http.Handler) http.Handler {
	set := make(map[string]bool)
	for _, id := range ids {
		set[id] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), allowedKey{}, set)))
		})
	}
}

func TestHandler(t *testing.T) {
	t.Parallel()

	anthropic := http.Header{"X-Api-Key": {"sk-test"}, "Anthropic-Version": {"2023-06-01"}}
	gemini := http.Header{"X-Goog-Api-Key": {"sk-test"}}
	bearer := http.Header{"Authorization": {"Bearer sk-test"}}

	tests := []struct {
		name    string
		method  string // default GET
		target  string
		header  http.Header
		catalog models.Catalog                    // default: testModels
		allowed []string                          // when set, only these ids are visible
		direct  bool                              // call the handler without the mux
		status  int                               // default 200
		golden  string                            // testdata/<golden>.json
		check   func(t *testing.T, h http.Header) // extra header checks
	}{
		// OpenAI format.
		{name: "OpenAIListByDefault", target: "/v1/models", header: bearer, golden: "list_openai"},
		{name: "OpenAIListWithoutCredentials", target: "/v1/models", golden: "list_openai"},
		{name: "OpenAIListOnTrailingSlash", target: "/v1/models/", golden: "list_openai"},
		{name: "OpenAIListIgnoresPagination", target: "/v1/models?limit=1&pageSize=1", golden: "list_openai"},
		{name: "OpenAIListWithXAPIKeyOnly", target: "/v1/models", header: http.Header{"X-Api-Key": {"sk-test"}}, golden: "list_openai"},
		{name: "OpenAIListWithAnthropicVersionOnly", target: "/v1/models", header: http.Header{"Anthropic-Version": {"2023-06-01"}}, golden: "list_openai"},
		{name: "OpenAIListWithEmptyKeyQuery", target: "/v1/models?key=", golden: "list_openai"},
		{name: "OpenAIListFilteredByAllowed", target: "/v1/models", allowed: []string{"bare", "text-basic"}, golden: "list_openai_allowed"},
		{name: "OpenAIListEmptyWhenNothingAllowed", target: "/v1/models", allowed: []string{}, golden: "list_openai_empty"},
		{name: "OpenAIModel", target: "/v1/models/text-basic", golden: "model_openai"},
		{name: "OpenAIModelWithSlashInID", target: "/v1/models/org/reasoner-2", golden: "model_openai_slash"},
		{name: "OpenAIModelNotFound", target: "/v1/models/no-such-model", status: 404, golden: "error_model_not_found"},
		{name: "OpenAIModelNotAllowed", target: "/v1/models/text-basic", allowed: []string{"bare"}, status: 404, golden: "error_model_not_allowed"},

		// Messages format.
		{name: "AnthropicList", target: "/v1/models", header: anthropic, golden: "list_anthropic"},
		{name: "AnthropicListWinsOverGeminiKey", target: "/v1/models?key=k", header: anthropic, golden: "list_anthropic"},
		{name: "AnthropicListFirstPage", target: "/v1/models?limit=2", header: anthropic, golden: "list_anthropic_limit"},
		{name: "AnthropicListAfterID", target: "/v1/models?limit=2&after_id=text-basic", header: anthropic, golden: "list_anthropic_after"},
		{name: "AnthropicListAfterLastID", target: "/v1/models?after_id=bare", header: anthropic, golden: "list_anthropic_empty"},
		{name: "AnthropicListBeforeID", target: "/v1/models?limit=1&before_id=video-first-kind", header: anthropic, golden: "list_anthropic_before"},
		{name: "AnthropicListEmpty", target: "/v1/models", header: anthropic, allowed: []string{}, golden: "list_anthropic_empty"},
		{name: "AnthropicModel", target: "/v1/models/org/reasoner-2", header: anthropic, golden: "model_anthropic"},
		{name: "AnthropicModelNotFound", target: "/v1/models/no-such-model", header: anthropic, status: 404, golden: "error_model_not_found"},
		{name: "AnthropicLimitZero", target: "/v1/models?limit=0", header: anthropic, status: 400, golden: "error_anthropic_limit"},
		{name: "AnthropicLimitTooLarge", target: "/v1/models?limit=1001", header: anthropic, status: 400, golden: "error_anthropic_limit"},
		{name: "AnthropicLimitNotANumber", target: "/v1/models?limit=ten", header: anthropic, status: 400, golden: "error_anthropic_limit"},
		{name: "AnthropicAfterIDUnknown", target: "/v1/models?after_id=no-such-model", header: anthropic, status: 400, golden: "error_anthropic_after_id"},
		{name: "AnthropicAfterIDNotAllowed", target: "/v1/models?after_id=no-such-model", header: anthropic, allowed: []string{"bare"}, status: 400, golden: "error_anthropic_after_id"},
		{name: "AnthropicBeforeIDUnknown", target: "/v1/models?before_id=no-such-model", header: anthropic, status: 400, golden: "error_anthropic_before_id"},
		{name: "AnthropicBothCursors", target: "/v1/models?after_id=bare&before_id=bare", header: anthropic, status: 400, golden: "error_anthropic_both_cursors"},

		// Gemini style.
		{name: "GeminiListByHeader", target: "/v1/models", header: gemini, golden: "list_gemini"},
		{name: "GeminiListByQueryKey", target: "/v1/models?key=sk-test", golden: "list_gemini"},
		{name: "GeminiListOnBeta", target: "/v1beta/models", golden: "list_gemini"},
		{name: "GeminiListOnBetaWhateverTheCredentials", target: "/v1beta/models", header: anthropic, golden: "list_gemini"},
		{name: "GeminiListPageSizeZeroIsDefault", target: "/v1beta/models?pageSize=0", golden: "list_gemini"},
		{name: "GeminiListFirstPage", target: "/v1beta/models?pageSize=2", golden: "list_gemini_page1"},
		{name: "GeminiListSecondPage", target: "/v1beta/models?pageSize=2&pageToken=b3JnL3JlYXNvbmVyLTI", golden: "list_gemini_page2"},
		{name: "GeminiListFilteredByAllowed", target: "/v1beta/models", allowed: []string{"video-first-kind"}, golden: "list_gemini_allowed"},
		{name: "GeminiModelOnBeta", target: "/v1beta/models/video-first-kind", golden: "model_gemini"},
		{name: "GeminiModelOnV1ByKey", target: "/v1/models/video-first-kind?key=sk-test", golden: "model_gemini"},
		{name: "GeminiModelReasoning", target: "/v1beta/models/org/reasoner-2", golden: "model_gemini_reasoning"},
		{name: "GeminiModelNotFound", target: "/v1beta/models/no-such-model", status: 404, golden: "error_gemini_model_not_found"},
		{name: "GeminiModelNotFoundOnV1ByKey", target: "/v1/models/no-such-model?key=sk-test", status: 404, golden: "error_model_not_found"},
		{name: "GeminiPageSizeNegative", target: "/v1beta/models?pageSize=-1", status: 400, golden: "error_gemini_page_size"},
		{name: "GeminiPageTokenMalformed", target: "/v1beta/models?pageToken=%21%21", status: 400, golden: "error_gemini_page_token"},
		{name: "GeminiPageTokenOfHiddenModel", target: "/v1beta/models?pageToken=b3JnL3JlYXNvbmVyLTI", allowed: []string{"bare"}, status: 400, golden: "error_gemini_page_token"},

		// Failures.
		{name: "CatalogListFails", target: "/v1/models", catalog: failingCatalog{errors.New("db down")}, status: 500, golden: "error_internal"},
		{name: "CatalogGetFails", target: "/v1/models/text-basic", catalog: failingCatalog{errors.New("db down")}, status: 500, golden: "error_internal"},
		{name: "CatalogGetFailsOnBeta", target: "/v1beta/models/text-basic", catalog: failingCatalog{errors.New("db down")}, status: 500, golden: "error_gemini_internal"},
		{name: "CatalogTimesOutOnBeta", target: "/v1beta/models", catalog: failingCatalog{context.DeadlineExceeded}, status: 504, golden: "error_gemini_timeout"},
		{name: "CatalogTimesOut", target: "/v1/models", catalog: failingCatalog{context.DeadlineExceeded}, status: 504, golden: "error_timeout"},
		{
			name: "MethodNotAllowed", method: http.MethodPost, target: "/v1/models", direct: true,
			status: 405, golden: "error_method_not_allowed",
			check: func(t *testing.T, h http.Header) { require.Equal(t, "GET, HEAD", h.Get("Allow")) },
		},
		{name: "UnknownRoute", target: "/v1/modelsx", direct: true, status: 404, golden: "error_unknown_route"},
		{
			name: "MethodNotAllowedOnBeta", method: http.MethodPost, target: "/v1beta/models", direct: true,
			status: 405, golden: "error_gemini_method_not_allowed",
			check: func(t *testing.T, h http.Header) { require.Equal(t, "GET, HEAD", h.Get("Allow")) },
		},
		{name: "UnknownRouteOnBeta", target: "/v1beta/modelsx", direct: true, status: 404, golden: "error_gemini_unknown_route"},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			catalog := tc.catalog
			if catalog == nil {
				catalog = models.NewMemoryCatalog(testModels()...)
			}
			var h http.Handler = models.NewHandler(catalog, models.WithAllowed(allowFromContext))
			if !tc.direct {
				mux := http.NewServeMux()
				models.Register(mux, h)
				h = mux
			}
			if tc.allowed != nil {
				h = withAllowed(tc.allowed...)(h)
			}
			method := tc.method
			if method == "" {
				method = http.MethodGet
			}
			req := httptest.NewRequest(method, tc.target, nil)
			for k, vs := range tc.header {
				req.Header[k] = vs
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			res := rec.Result()
			want := tc.status
			if want == 0 {
				want = http.StatusOK
			}
			require.Equal(t, want, res.StatusCode, "body: %s", rec.Body)
			require.Equal(t, "application/json", res.Header.Get("Content-Type"))
			if tc.check != nil {
				tc.check(t, res.Header)
			}
			golden(t, tc.golden, rec.Body.Bytes())
		})
	}
}

// golden compares the JSON got with testdata/<name>.json, or rewrites the
// file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	var gotV any
	require.NoError(t, json.Unmarshal(got, &gotV), "body: %s", got)
	if *update {
		b, err := json.MarshalIndent(gotV, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./models -update to create it")
	var wantV any
	require.NoError(t, json.Unmarshal(want, &wantV))
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestHandlerHead(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	models.Register(mux, models.NewHandler(models.NewMemoryCatalog(testModels()...)))
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/v1/models", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
}

func TestHandlerCanceledRequestWritesNothing(t *testing.T) {
	t.Parallel()
	h := models.NewHandler(failingCatalog{context.Canceled})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	require.Empty(t, rec.Body.String())
	require.Empty(t, rec.Header().Get("Content-Type"))
}

func TestHandlerAllowFuncGetsRequestContext(t *testing.T) {
	t.Parallel()
	type key struct{}
	var seen []string
	allow := func(ctx context.Context, id string) bool {
		seen = append(seen, id)
		return ctx.Value(key{}) == "principal"
	}
	h := models.NewHandler(models.NewMemoryCatalog(testModels()...), models.WithAllowed(allow))
	req := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
	req = req.WithContext(context.WithValue(req.Context(), key{}, "principal"))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)

	var list models.OpenAIList
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &list))
	require.Len(t, list.Data, len(testModels()))
	require.Equal(t, []string{"text-basic", "org/reasoner-2", "video-first-kind", "bare"}, seen)
}

func TestHandlerLogsServerErrors(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	logger := newTestLogger(&buf)
	h := models.NewHandler(failingCatalog{errors.New("db down")}, models.WithLogger(logger))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Contains(t, buf.String(), "db down")
	require.NotContains(t, rec.Body.String(), "db down")
}

func TestNewHandlerPanicsOnNilCatalog(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "models: NewHandler: nil Catalog", func() { models.NewHandler(nil) })
}

func TestFormatOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		target string
		header http.Header
		want   models.Format
	}{
		{"Default", "/v1/models", nil, models.FormatOpenAI},
		{"Bearer", "/v1/models", http.Header{"Authorization": {"Bearer sk-x"}}, models.FormatOpenAI},
		{"Anthropic", "/v1/models", http.Header{"X-Api-Key": {"k"}, "Anthropic-Version": {"2023-06-01"}}, models.FormatAnthropic},
		{"AnthropicEmptyVersion", "/v1/models", http.Header{"X-Api-Key": {"k"}, "Anthropic-Version": {""}}, models.FormatOpenAI},
		{"GoogHeader", "/v1/models", http.Header{"X-Goog-Api-Key": {"k"}}, models.FormatGemini},
		{"KeyQuery", "/v1/models?key=k", nil, models.FormatGemini},
		{"AnthropicBeforeGemini", "/v1/models?key=k", http.Header{"X-Api-Key": {"k"}, "Anthropic-Version": {"v"}, "X-Goog-Api-Key": {"k"}}, models.FormatAnthropic},
		{"XAPIKeyAndKeyQuery", "/v1/models?key=k", http.Header{"X-Api-Key": {"k"}}, models.FormatGemini},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			for k, vs := range tc.header {
				req.Header[k] = vs
			}
			require.Equal(t, tc.want, models.FormatOf(req))
		})
	}
	require.Equal(t, "openai", models.FormatOpenAI.String())
	require.Equal(t, "anthropic", models.FormatAnthropic.String())
	require.Equal(t, "gemini", models.FormatGemini.String())
}

// safeBuffer is a strings.Builder safe for concurrent use, for logs.
type safeBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestLogger(buf *safeBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
