package relay_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/relay"
)

func TestUpstreamError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		status     int
		header     http.Header
		body       string
		wantStatus int
		wantType   string
		wantCode   apierrors.Code
		wantParam  string
		wantMsg    string
		wantRetry  time.Duration
	}{
		{
			name: "400 envelope", status: 400,
			body:       `{"error":{"message":"temperature is too high","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`,
			wantStatus: 400, wantType: "invalid_request_error", wantCode: "invalid_value", wantParam: "temperature", wantMsg: "temperature is too high",
		},
		{
			name: "400 envelope without code", status: 400,
			body:       `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`,
			wantStatus: 400, wantType: "invalid_request_error", wantCode: "invalid_request_error", wantMsg: "bad",
		},
		{
			name: "401 without body", status: 401,
			wantStatus: 502, wantType: "upstream_error", wantCode: "bad_gateway", wantMsg: upstreamRefused401,
		},
		{
			name: "401 is the gateway's key, not the client's", status: 401,
			body:       `{"error":{"message":"Incorrect API key provided: Bearer sk-upstream-secret-1234 at llm-7.internal","type":"invalid_request_error","code":"invalid_api_key"}}`,
			wantStatus: 502, wantType: "upstream_error", wantCode: "bad_gateway", wantMsg: upstreamRefused401,
		},
		{
			name: "403", status: 403, body: `{"error":{"message":"Project does not have access","type":"invalid_request_error","code":"permission_denied"}}`,
			wantStatus: 502, wantType: "upstream_error", wantCode: "bad_gateway",
			wantMsg: "The upstream refused the gateway's credentials (HTTP 403 Forbidden); your API key was accepted: the gateway's operator must fix the upstream key.",
		},
		{
			name: "400 that echoes credentials", status: 400,
			body:       `{"error":{"message":"bad header Authorization: Bearer sk-upstream-secret-1234 and x-api-key: abc123 for key=up-secret","type":"invalid_request_error"}}`,
			wantStatus: 400, wantType: "invalid_request_error", wantCode: "invalid_request_error",
			wantMsg: "bad header Authorization: Bearer [redacted] and x-api-key: [redacted] for key=[redacted]",
		},
		{
			name: "404 plain text", status: 404, body: "404 page not found",
			wantStatus: 404, wantType: "invalid_request_error", wantCode: "not_found", wantMsg: "The upstream refused the request (HTTP 404 Not Found).",
		},
		{
			name: "error as a string", status: 422, body: `{"error":"prompt too long"}`,
			wantStatus: 422, wantType: "invalid_request_error", wantCode: "invalid_request_error", wantMsg: "prompt too long",
		},
		{
			name: "vLLM shape with a numeric code", status: 400, body: `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`,
			wantStatus: 400, wantType: "BadRequestError", wantCode: "400", wantMsg: "max_tokens is too large",
		},
		{
			name: "429 Retry-After seconds", status: 429, header: http.Header{"Retry-After": {"7"}},
			body:       `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			wantStatus: 429, wantType: "requests", wantCode: "rate_limit_exceeded", wantMsg: "Rate limit reached", wantRetry: 7 * time.Second,
		},
		{
			name: "429 retry-after-ms", status: 429, header: http.Header{"Retry-After-Ms": {"1500"}},
			wantStatus: 429, wantType: "rate_limit_error", wantCode: "rate_limit_exceeded", wantMsg: "The upstream refused the request (HTTP 429 Too Many Requests).", wantRetry: 1500 * time.Millisecond,
		},
		{
			name: "500", status: 500, body: `{"error":{"message":"internal detail at 10.0.0.3","type":"server_error"}}`,
			wantStatus: 502, wantType: "upstream_error", wantCode: "bad_gateway", wantMsg: "The upstream failed (HTTP 500).",
		},
		{
			name: "unexpected redirect", status: 302,
			wantStatus: 502, wantType: "upstream_error", wantCode: "bad_gateway", wantMsg: "The upstream failed (HTTP 302).",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.header
			if h == nil {
				h = http.Header{}
			}
			body := &closeRecorder{Reader: strings.NewReader(tc.body)}
			res := &http.Response{StatusCode: tc.status, Status: http.StatusText(tc.status), Header: h, Body: body}
			err := relay.UpstreamError(res, &relay.Upstream{Name: "up"})
			require.True(t, body.closed, "the body is closed")
			var e *apierrors.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, tc.wantStatus, e.Status)
			require.Equal(t, tc.wantType, e.Type)
			require.Equal(t, tc.wantCode, e.Code)
			require.Equal(t, tc.wantParam, e.Param)
			require.Equal(t, tc.wantMsg, e.Message)
			require.Equal(t, tc.wantRetry, e.RetryAfter)
			require.Contains(t, e.Error(), "upstream up answered", "the cause names the upstream for the log")
		})
	}
}

func TestUpstreamErrorRetryAfterDate(t *testing.T) {
	t.Parallel()
	when := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	res := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {when}}, Body: io.NopCloser(strings.NewReader(""))}
	var e *apierrors.Error
	require.ErrorAs(t, relay.UpstreamError(res, nil), &e)
	require.Greater(t, e.RetryAfter, 20*time.Second)
	require.LessOrEqual(t, e.RetryAfter, 30*time.Second)
}

// upstreamRefused401 is the client's message for an upstream 401.
const upstreamRefused401 = "The upstream refused the gateway's credentials (HTTP 401 Unauthorized); your API key was accepted: the gateway's operator must fix the upstream key."

func TestUpstreamErrorRedactsTheCause(t *testing.T) {
	t.Parallel()
	for _, status := range []int{400, 401, 403, 500} {
		body := `{"error":{"message":"refused Bearer sk-proj-abcdefgh1234 and the key my-upstream-key-9 on 10.0.0.7"}}`
		res := &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		err := relay.UpstreamError(res, &relay.Upstream{Name: "up", Key: "my-upstream-key-9"})
		var e *apierrors.Error
		require.ErrorAs(t, err, &e)
		for _, s := range []string{e.Error(), e.Message} {
			require.NotContains(t, s, "my-upstream-key-9")
			require.NotContains(t, s, "sk-proj")
			require.NotContains(t, s, "Bearer sk-")
		}
		require.Contains(t, e.Error(), "refused Bearer [redacted]", "the log keeps the rest of the upstream's text")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
		keys           []string
	}{
		{name: "nothing to hide", in: "Invalid value for 'temperature': 3 is greater than 2.", want: "Invalid value for 'temperature': 3 is greater than 2."},
		{name: "max_tokens is no token", in: "max_tokens is too large: 5000", want: "max_tokens is too large: 5000"},
		{name: "bearer", in: "Authorization: Bearer sk-abc.def", want: "Authorization: Bearer [redacted]"},
		{name: "bearer lower case", in: "bearer abc123", want: "bearer [redacted]"},
		{name: "sk token", in: "Incorrect API key provided: sk-proj-12345678****wxyz.", want: "Incorrect API key provided: [redacted]."},
		{name: "google key", in: "API key not valid: AIzaSyA1234567890abcdefghijkl", want: "API key not valid: [redacted]"},
		{name: "x-api-key header", in: "x-api-key: hunter2-secret", want: "x-api-key: [redacted]"},
		{name: "x-goog-api-key header", in: "X-Goog-Api-Key=hunter2", want: "X-Goog-Api-Key=[redacted]"},
		{name: "key query", in: "GET /v1beta/models/g:generateContent?alt=sse&key=hunter2&x=1", want: "GET /v1beta/models/g:generateContent?alt=sse&key=[redacted]&x=1"},
		{name: "json member", in: `{"api_key": "hunter2", "n": 1}`, want: `{"api_key": "[redacted]", "n": 1}`},
		{name: "basic auth", in: "Authorization: Basic dXNlcjpwYXNz", want: "Authorization: Basic [redacted]"},
		{name: "configured key", in: "your key up-secret is wrong (up-secret)", keys: []string{"up-secret", ""}, want: "your key [redacted] is wrong ([redacted])"},
		{name: "escaped json", in: `{"message":"sent {\"api_key\": \"hunter2\"}"}`, want: `{"message":"sent {\"api_key\": \"[redacted]\"}"}`},
		{name: "escaped bearer", in: `"header \"Bearer hunter2\""`, want: `"header \"Bearer [redacted]\""`},
		{name: "monkey is no key", in: "monkey=banana", want: "monkey=banana"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, relay.Redact(tc.in, tc.keys...))
		})
	}
}

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// FuzzRedact checks that a configured key never survives Redact, wherever
// it sits in the text. (A key made of letters, digits and dashes, with a
// digit, so that it cannot be part of "[redacted]" itself.)
func FuzzRedact(f *testing.F) {
	f.Add("Incorrect API key provided: Bearer sk-up-123 at host", "sk-up-123")
	f.Add(`{"error":{"message":"key=up1 x-api-key: up1"}}`, "up1")
	f.Add("sk-up-123sk-up-123", "sk-up-123")
	f.Fuzz(func(t *testing.T, text, key string) {
		ok := key != "" && strings.ContainsAny(key, "0123456789")
		for _, c := range key {
			ok = ok && (c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
		}
		got := relay.Redact(text, key)
		if ok && strings.Contains(got, key) {
			t.Fatalf("Redact(%q, %q) = %q keeps the key", text, key, got)
		}
	})
}
