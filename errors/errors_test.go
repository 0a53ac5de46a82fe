package errors_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

var update = flag.Bool("update", false, "update golden files")

// golden compares got (a JSON body) with testdata/name, after decoding both.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		var v any
		require.NoError(t, json.Unmarshal(got, &v))
		pretty, err := json.MarshalIndent(v, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(pretty, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	var wantV, gotV any
	require.NoError(t, json.Unmarshal(want, &wantV))
	require.NoError(t, json.Unmarshal(got, &gotV), "body: %s", got)
	if diff := cmp.Diff(wantV, gotV); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestStatusAndTypeOfEveryCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code   apierrors.Code
		status int
		typ    string
	}{
		{apierrors.CodeInvalidRequest, 400, "invalid_request_error"},
		{apierrors.CodeInvalidAPIKey, 401, "invalid_request_error"},
		{apierrors.CodeMissingAuthorization, 401, "invalid_request_error"},
		{apierrors.CodeInsufficientQuota, 403, "insufficient_quota"},
		{apierrors.CodeModelNotFound, 404, "invalid_request_error"},
		{apierrors.CodeNotFound, 404, "invalid_request_error"},
		{apierrors.CodeMethodNotAllowed, 405, "invalid_request_error"},
		{apierrors.CodeRateLimitExceeded, 429, "rate_limit_error"},
		{apierrors.CodeInternal, 500, "server_error"},
		{apierrors.CodeBadGateway, 502, "upstream_error"},
		{apierrors.CodeServiceUnavailable, 503, "server_error"},
		{apierrors.CodeGatewayTimeout, 504, "timeout_error"},
	}
	for _, tc := range tests {
		t.Run(string(tc.code), func(t *testing.T) {
			t.Parallel()
			e := apierrors.New(tc.code, "m")
			require.Equal(t, tc.status, e.Status)
			require.Equal(t, tc.typ, e.Type)
			require.Equal(t, tc.code, e.Code)
		})
	}
}

func TestWriteShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		shape  apierrors.Shape
		err    error
		status int
	}{
		{"general_invalid_request", apierrors.General, apierrors.InvalidRequest("messages[0].role", "messages[0].role must be one of system, user, assistant, tool"), 400},
		{"general_invalid_api_key", apierrors.General, apierrors.InvalidAPIKey("Incorrect API key provided."), 401},
		{"general_missing_authorization", apierrors.General, apierrors.MissingAuthorization("Missing Authorization header."), 401},
		{"general_insufficient_quota", apierrors.General, apierrors.InsufficientQuota("Your key has no quota left."), 403},
		{"general_model_not_found", apierrors.General, apierrors.ModelNotFound("gpt-x"), 404},
		{"general_rate_limit_exceeded", apierrors.General, apierrors.RateLimitExceeded("Rate limit reached.", 1500*time.Millisecond), 429},
		{"general_internal", apierrors.General, errors.New("database password is hunter2"), 500},
		{"general_bad_gateway", apierrors.General, apierrors.BadGateway("The upstream answered 503.", errors.New("dial tcp: refused")), 502},
		{"general_service_unavailable", apierrors.General, apierrors.New(apierrors.CodeServiceUnavailable, "The gateway is starting: its upstream has not answered yet."), 503},
		{"general_timeout", apierrors.General, fmt.Errorf("calling upstream: %w", context.DeadlineExceeded), 504},
		{"flat_invalid_request", apierrors.Flat, apierrors.InvalidRequest("seconds", "seconds must be one of 4, 8, 12, 16, 20, got 5"), 400},
		{"flat_model_not_found", apierrors.Flat, apierrors.ModelNotFound("video-x"), 400},
		{"flat_insufficient_quota", apierrors.Flat, apierrors.InsufficientQuota("Your key has no quota left."), 403},
		{"content_not_completed", apierrors.Content, apierrors.InvalidRequest("", "The task is in_progress; content is available once it is completed."), 400},
		{"content_not_found", apierrors.Content, apierrors.NotFound("No task task_abc."), 404},
		{"general_unavailable", apierrors.General, apierrors.Unavailable(errors.New("dial tcp 10.0.0.5:5432: connection refused")), 503},
		{"flat_unavailable", apierrors.Flat, apierrors.Unavailable(errors.New("dial tcp 10.0.0.5:5432: connection refused")), 503},
		{"content_unavailable", apierrors.Content, apierrors.Unavailable(errors.New("dial tcp 10.0.0.5:5432: connection refused")), 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/v1/x", nil)
			apierrors.Renderer{Shape: tc.shape}.Write(rec, req, tc.err)
			require.Equal(t, tc.status, rec.Code)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			golden(t, tc.name+".json", rec.Body.Bytes())
		})
	}
}

func TestWriteSetsRetryAfterAndExtraHeaders(t *testing.T) {
	t.Parallel()
	e := apierrors.RateLimitExceeded("slow down", 1500*time.Millisecond)
	e.Header = http.Header{"X-Ratelimit-Limit-Requests": {"60"}}
	rec := httptest.NewRecorder()
	apierrors.Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), fmt.Errorf("wrapped: %w", e))
	require.Equal(t, 429, rec.Code)
	require.Equal(t, "2", rec.Header().Get("Retry-After"), "rounded up to whole seconds")
	require.Equal(t, "60", rec.Header().Get("X-Ratelimit-Limit-Requests"))
}

func TestUnavailableIsA503WithRetryAfter(t *testing.T) {
	t.Parallel()
	e := apierrors.Unavailable(errors.New("pgx: closed pool"))
	require.Equal(t, apierrors.CodeServiceUnavailable, e.Code)
	require.EqualError(t, errors.Unwrap(e), "pgx: closed pool")
	rec := httptest.NewRecorder()
	apierrors.Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), fmt.Errorf("videos: task store: %w", e))
	require.Equal(t, 503, rec.Code)
	require.Equal(t, "2", rec.Header().Get("Retry-After"))
	require.NotContains(t, rec.Body.String(), "pgx")
}

func TestFromDependency(t *testing.T) {
	t.Parallel()
	live := context.Background()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	refusal := apierrors.InsufficientQuota("no quota")
	down := errors.New("dial tcp: connection refused")
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want error // nil: an Unavailable whose cause is err
		code apierrors.Code
	}{
		{"a dependency's own API error passes", live, fmt.Errorf("store: %w", refusal), nil, apierrors.CodeInsufficientQuota},
		{"an outage is a 503", live, down, nil, apierrors.CodeServiceUnavailable},
		{"a dependency's own timeout is a 503", live, fmt.Errorf("connect: %w", context.DeadlineExceeded), nil, apierrors.CodeServiceUnavailable},
		{"a dependency's own cancellation is a 503", live, fmt.Errorf("pool: %w", context.Canceled), nil, apierrors.CodeServiceUnavailable},
		{"the client's departure passes", canceled, fmt.Errorf("query: %w", context.Canceled), nil, ""},
		{"the request's deadline passes", expired, fmt.Errorf("query: %w", context.DeadlineExceeded), nil, apierrors.CodeGatewayTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := apierrors.FromDependency(tc.ctx, tc.err)
			require.ErrorIs(t, got, tc.err, "the cause is kept")
			if tc.code == "" {
				require.Same(t, tc.err, got)
				require.False(t, apierrors.Has(got))
				return
			}
			require.Equal(t, tc.code, apierrors.From(got).Code)
		})
	}
	require.NoError(t, apierrors.FromDependency(live, nil))
}

func TestWriteCanceledWritesNothing(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	apierrors.Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), fmt.Errorf("backend: %w", context.Canceled))
	require.False(t, rec.Flushed)
	require.Zero(t, rec.Body.Len())
	require.Equal(t, 200, rec.Code, "recorder default: no WriteHeader call")
}

func TestWriteNilWritesNothing(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	apierrors.Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil)
	require.Zero(t, rec.Body.Len())
}

func TestWriteLogsCauseButNeverSendsIt(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	rd := apierrors.Renderer{Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
	rec := httptest.NewRecorder()
	rd.Write(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions?key=sk-secret", nil), errors.New("pq: connection refused"))

	require.Equal(t, 500, rec.Code)
	require.NotContains(t, rec.Body.String(), "pq:")
	require.Contains(t, rec.Body.String(), `"internal server error"`)
	require.Contains(t, logs.String(), "pq: connection refused")
	require.Contains(t, logs.String(), `"level":"ERROR"`)
	require.NotContains(t, logs.String(), "sk-secret", "the query string may hold a key")
}

func TestFrom(t *testing.T) {
	t.Parallel()
	require.Nil(t, apierrors.From(nil))

	inner := apierrors.InvalidRequest("n", "n too large")
	require.Same(t, inner, apierrors.From(fmt.Errorf("ctx: %w", inner)))

	e := apierrors.From(errors.New("boom"))
	require.Equal(t, 500, e.Status)
	require.Equal(t, "internal server error", e.Message)
	require.EqualError(t, errors.Unwrap(e), "boom")
}

func TestErrorStringIncludesCauseAndParam(t *testing.T) {
	t.Parallel()
	e := apierrors.InvalidRequest("top_p", "top_p must be at most 1").WithCause(errors.New("validator: lte"))
	require.Equal(t, "400 invalid_request_error: top_p must be at most 1 (param top_p): validator: lte", e.Error())
}

func TestWithParamAndWithCauseCopy(t *testing.T) {
	t.Parallel()
	base := apierrors.New(apierrors.CodeInvalidRequest, "bad")
	withParam := base.WithParam("model")
	require.Empty(t, base.Param, "WithParam must not change the receiver")
	require.Equal(t, "model", withParam.Param)
	withCause := base.WithCause(errors.New("x"))
	require.Nil(t, base.Err)
	require.Error(t, withCause.Err)
}

func TestShapeFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want apierrors.Shape
	}{
		{"/v1/chat/completions", apierrors.General},
		{"/v1/models", apierrors.General},
		{"/v1/videos/task_1/content", apierrors.General},
		{"/v1/messages", apierrors.Messages},
		{"/api/v1/messages", apierrors.Messages},
		{"/v1beta/models", apierrors.Google},
		{"/v1beta/models/demo-chat:generateContent", apierrors.Google},
		{"/v1beta/nope", apierrors.Google},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, apierrors.ShapeFor(httptest.NewRequest(http.MethodPost, tc.path, nil)))
		})
	}
}

func TestMethodNotAllowedListsTheMethods(t *testing.T) {
	t.Parallel()
	e := apierrors.MethodNotAllowed("PUT", "/v1/models", []string{"GET", "HEAD"})
	rec := httptest.NewRecorder()
	apierrors.Write(rec, httptest.NewRequest("PUT", "/v1/models", nil), e)
	require.Equal(t, 405, rec.Code)
	require.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
	require.JSONEq(t, `{"error":{"message":"The method PUT is not allowed on /v1/models; use GET or HEAD.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`, rec.Body.String())
}

// An empty list of methods reads as a sentence, and its Allow header is
// empty: the resource allows no method (RFC 9110, section 10.2.1).
func TestMethodNotAllowedWithoutMethods(t *testing.T) {
	t.Parallel()
	for _, allow := range [][]string{nil, {}} {
		e := apierrors.MethodNotAllowed("PUT", "/v1/gone", allow)
		rec := httptest.NewRecorder()
		apierrors.Write(rec, httptest.NewRequest("PUT", "/v1/gone", nil), e)
		require.Equal(t, 405, rec.Code)
		require.Equal(t, []string{""}, rec.Header().Values("Allow"))
		require.JSONEq(t, `{"error":{"message":"The method PUT is not allowed on /v1/gone.","type":"invalid_request_error","param":null,"code":"method_not_allowed"}}`, rec.Body.String())
	}
}

func TestEchoCutsLongValues(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 1<<20)
	for _, tc := range []struct{ name, in, echo, quote string }{
		{"Short", "gpt-x", "gpt-x", `"gpt-x"`},
		{"Exactly MaxEcho", strings.Repeat("a", apierrors.MaxEcho), strings.Repeat("a", apierrors.MaxEcho), `"` + strings.Repeat("a", apierrors.MaxEcho) + `"`},
		{"Long", long, strings.Repeat("9", apierrors.MaxEcho) + "…", `"` + strings.Repeat("9", apierrors.MaxEcho) + `…"`},
		// A cut never splits a character: é takes bytes 64 and 65.
		{"AtACharacter", strings.Repeat("a", apierrors.MaxEcho-1) + "éé", strings.Repeat("a", apierrors.MaxEcho-1) + "…", `"` + strings.Repeat("a", apierrors.MaxEcho-1) + `…"`},
		{"Escapes", "a\"b\n", "a\"b\n", `"a\"b\n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.echo, apierrors.Echo(tc.in))
			require.Equal(t, tc.quote, apierrors.Quote(tc.in))
		})
	}
}
