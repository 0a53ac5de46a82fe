package errors_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

func TestWriteFormatShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		shape  apierrors.Shape
		err    error
		status int
	}{
		{"messages_invalid_request", apierrors.Messages, apierrors.InvalidRequest("max_tokens", "max_tokens is required"), 400},
		{"messages_invalid_api_key", apierrors.Messages, apierrors.InvalidAPIKey("Incorrect API key provided."), 401},
		{"messages_insufficient_quota", apierrors.Messages, apierrors.InsufficientQuota("Your key has no quota left."), 403},
		{"messages_model_not_found", apierrors.Messages, apierrors.ModelNotFound("claude-x"), 404},
		{"messages_rate_limit_exceeded", apierrors.Messages, apierrors.RateLimitExceeded("Rate limit reached.", time.Second), 429},
		{"messages_internal", apierrors.Messages, errors.New("secret cause"), 500},
		{"messages_bad_gateway", apierrors.Messages, apierrors.BadGateway("The upstream failed.", nil), 502},
		{"google_invalid_request", apierrors.Google, apierrors.InvalidRequest("contents", "contents is required"), 400},
		{"google_missing_authorization", apierrors.Google, apierrors.MissingAuthorization("Missing API key."), 401},
		{"google_insufficient_quota", apierrors.Google, apierrors.InsufficientQuota("Your key has no quota left."), 403},
		{"google_model_not_found", apierrors.Google, apierrors.ModelNotFound("gemini-x"), 404},
		{"google_rate_limit_exceeded", apierrors.Google, apierrors.RateLimitExceeded("Rate limit reached.", time.Second), 429},
		{"google_bad_gateway", apierrors.Google, apierrors.BadGateway("The upstream failed.", nil), 502},
		{"google_timeout", apierrors.Google, fmt.Errorf("upstream: %w", context.DeadlineExceeded), 504},
		{"messages_unavailable", apierrors.Messages, apierrors.Unavailable(errors.New("secret cause")), 503},
		{"google_unavailable", apierrors.Google, apierrors.Unavailable(errors.New("secret cause")), 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "/v1/x", nil)
			apierrors.Renderer{Shape: tc.shape}.Write(rec, req, tc.err)
			require.Equal(t, tc.status, rec.Code)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			require.NotContains(t, rec.Body.String(), "secret cause")
			golden(t, tc.name+".json", rec.Body.Bytes())
		})
	}
}

func TestMessagesTypeFollowsStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{
		400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
		404: "not_found_error", 409: "invalid_request_error", 413: "request_too_large",
		429: "rate_limit_error", 500: "api_error", 502: "api_error", 529: "overloaded_error",
	} {
		got := apierrors.MessagesBodyOf(&apierrors.Error{Status: status, Message: "m"})
		require.Equal(t, "error", got.Type)
		require.Equal(t, want, got.Error.Type, "status %d", status)
		require.Equal(t, "m", got.Error.Message)
	}
}

func TestGoogleStatusFollowsStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]string{
		400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
		409: "ABORTED", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED",
		500: "INTERNAL", 501: "UNIMPLEMENTED", 502: "UNAVAILABLE", 503: "UNAVAILABLE",
		504: "DEADLINE_EXCEEDED", 0: "INTERNAL",
	} {
		got := apierrors.GoogleBodyOf(&apierrors.Error{Status: status, Code: "x", Message: "m"})
		require.Equal(t, want, got.Error.Status, "status %d", status)
		if status == 0 {
			require.Equal(t, 500, got.Error.Code, "an out-of-range status is sent as 500")
		} else {
			require.Equal(t, status, got.Error.Code)
		}
		require.Equal(t, "X", got.Error.Details[0].Reason)
	}
}
