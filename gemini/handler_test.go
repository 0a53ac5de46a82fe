package gemini_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/relay"
)

func TestPatternIsTheRelays(t *testing.T) {
	t.Parallel()
	require.Equal(t, relay.PatternGemini, gemini.Pattern)
}

// TestErrors checks every error before the reply: Google's error object
// with the HTTP status as code and the status name, whatever the method.
func TestErrors(t *testing.T) {
	t.Parallel()
	var hooked []*apierrors.Error
	h := newTestHandler(endpoint.WithMaxRequestBytes(1024), endpoint.WithErrorHook(func(_ *http.Request, e *apierrors.Error) { hooked = append(hooked, e) }))
	ok := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	tests := []struct {
		name, path, body, contentType string
		code                          int
		status, msg, param            string
	}{
		{name: "unknown method", path: "/v1beta/models/demo-chat:countTokens", body: ok, code: 404, status: "NOT_FOUND", msg: "this gateway serves :generateContent and :streamGenerateContent"},
		{name: "no method", path: "/v1beta/models/demo-chat", body: ok, code: 404, status: "NOT_FOUND", msg: "No method at"},
		{name: "unknown model", path: "/v1beta/models/nope:generateContent", body: ok, code: 404, status: "NOT_FOUND", msg: "nope", param: "model"},
		{name: "model without compat", path: "/v1beta/models/responses-only:generateContent", body: ok, code: 400, status: "INVALID_ARGUMENT", msg: "compat", param: "model"},
		{name: "not JSON", path: "/v1beta/models/demo-chat:generateContent", body: `{"contents":`, code: 400, status: "INVALID_ARGUMENT", msg: "not valid JSON"},
		{name: "wrong type", path: "/v1beta/models/demo-chat:streamGenerateContent", body: `{"contents":"hi"}`, code: 400, status: "INVALID_ARGUMENT", msg: "contents", param: "contents"},
		{name: "content type", path: "/v1beta/models/demo-chat:generateContent", body: ok, contentType: "text/plain", code: 400, status: "INVALID_ARGUMENT", msg: "Content-Type"},
		{name: "too large", path: "/v1beta/models/demo-chat:generateContent", body: `{"contents":[{"parts":[{"text":"` + strings.Repeat("a", 2000) + `"}]}]}`, code: 400, status: "INVALID_ARGUMENT", msg: "larger than"},
		{name: "maxOutputTokens above the gateway's largest", path: "/v1beta/models/demo-chat:generateContent", body: `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"candidateCount":4,"maxOutputTokens":4611686018427387904}}`, code: 400, status: "INVALID_ARGUMENT", msg: "generationConfig.maxOutputTokens must be at most 2147483647, got 4611686018427387904", param: "generationConfig.maxOutputTokens"},
		{name: "maxOutputTokens of the largest int64", path: "/v1beta/models/demo-chat:generateContent", body: `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"maxOutputTokens":9223372036854775807}}`, code: 400, status: "INVALID_ARGUMENT", msg: "must be at most 2147483647", param: "generationConfig.maxOutputTokens"},
		{name: "invalid", path: "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", body: `{"contents":[]}`, code: 400, status: "INVALID_ARGUMENT", msg: "contents is not specified", param: "contents"},
		{name: "backend fails", path: "/v1beta/models/demo-chat:generateContent", body: `{"contents":[{"parts":[{"text":"[demo:fail]"}]}]}`, code: 502, status: "UNAVAILABLE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			req.Header.Set("Content-Type", ct)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			require.Equal(t, tc.code, w.Code, w.Body.String())
			require.Equal(t, "application/json", w.Header().Get("Content-Type"))
			var body apierrors.GoogleBody
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), w.Body.String())
			require.Equal(t, tc.code, body.Error.Code)
			require.Equal(t, tc.status, body.Error.Status)
			require.Contains(t, body.Error.Message, tc.msg)
			require.Len(t, body.Error.Details, 1)
			require.Equal(t, tc.param, body.Error.Details[0].Metadata["param"])
		})
	}
	require.Len(t, hooked, len(tests), "the error hook sees every error")
}

// TestStreamFailsAfterStart checks a stream whose backend fails after the
// first event: the stream ends with Google's error object, as an SSE
// data: line or as the last element of the array, which stays valid
// JSON.
func TestStreamFailsAfterStart(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	body := `{"contents":[{"parts":[{"text":"Hello [demo:fail]"}]}]}`
	w := post(t, h, "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", body)
	require.Equal(t, 200, w.Code)
	blocks := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
	require.Greater(t, len(blocks), 1)
	last, ok := strings.CutPrefix(blocks[len(blocks)-1], "data: ")
	require.True(t, ok)
	require.JSONEq(t, `{"error":{"code":502,"message":"demo: simulated upstream failure ([demo:fail])","status":"UNAVAILABLE",`+
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"BAD_GATEWAY","domain":"gatewaykit"}]}}`, last)

	w = post(t, h, "/v1beta/models/demo-chat:streamGenerateContent", body)
	require.Equal(t, 200, w.Code)
	var events []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &events), w.Body.String())
	require.Greater(t, len(events), 1)
	require.Contains(t, events[len(events)-1], "error")
	require.NotContains(t, events[0], "error")
}

// TestFallbackWithoutPathValue checks that the handler finds the model
// and method in the path when it is mounted without its pattern.
func TestFallbackWithoutPathValue(t *testing.T) {
	t.Parallel()
	h := gemini.NewHandler(newCatalog(), demo.NewTextBackend().Chat())
	w := post(t, h, "/v1beta/models/demo-chat:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	var r gemini.Response
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &r))
	require.Equal(t, "demo-chat", r.ModelVersion)
}

func TestNewHandlerPanics(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "gemini: NewHandler: nil Catalog", func() { gemini.NewHandler(nil, demo.NewTextBackend().Chat()) })
	require.PanicsWithValue(t, "gemini: NewHandler: nil Backend", func() { gemini.NewHandler(newCatalog(), nil) })
}

func TestAction(t *testing.T) {
	t.Parallel()
	tests := []struct {
		action, model, method string
		ok                    bool
	}{
		{"demo-chat:generateContent", "demo-chat", "generateContent", true},
		{"models/demo-chat:streamGenerateContent", "demo-chat", "streamGenerateContent", true},
		{"tunedModels/x:generateContent", "tunedModels/x", "generateContent", true},
		{"a:b:generateContent", "a:b", "generateContent", true},
		{":generateContent", "", "", false},
		{"demo-chat:embedContent", "", "", false},
		{"demo-chat", "", "", false},
	}
	for _, tc := range tests {
		model, method, ok := gemini.Action(tc.action)
		require.Equal(t, tc.ok, ok, tc.action)
		require.Equal(t, tc.model, model, tc.action)
		require.Equal(t, tc.method, method, tc.action)
	}
}

// failing is a streaming backend that fails before its first delta.
type failing struct{}

func (failing) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return nil, apierrors.RateLimitExceeded("Slow down.", 3*time.Second)
}

func (failing) Stream(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
	return func(yield func(chat.Delta, error) bool) {
		yield(chat.Delta{}, apierrors.RateLimitExceeded("Slow down.", 3*time.Second))
	}
}

// TestStreamFailsBeforeStart checks that a stream whose backend fails
// before its first delta is answered as JSON with the real status and
// its Retry-After, in both forms.
func TestStreamFailsBeforeStart(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	gemini.Register(mux, gemini.NewHandler(newCatalog(), failing{}))
	for _, q := range []string{"?alt=sse", ""} {
		w := post(t, mux, "/v1beta/models/demo-chat:streamGenerateContent"+q, `{"contents":[{"parts":[{"text":"hi"}]}]}`)
		require.Equal(t, 429, w.Code)
		require.Equal(t, "3", w.Header().Get("Retry-After"))
		require.Equal(t, "application/json", w.Header().Get("Content-Type"))
		var body apierrors.GoogleBody
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, "RESOURCE_EXHAUSTED", body.Error.Status)
		require.Equal(t, "Slow down.", body.Error.Message)
	}
}
