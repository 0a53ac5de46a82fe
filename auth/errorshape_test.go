package auth_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

func TestMiddlewareErrorShape(t *testing.T) {
	t.Parallel()
	// The shape is picked per request; here from a query parameter.
	shapeOf := func(r *http.Request) apierrors.Shape {
		switch r.URL.Query().Get("shape") {
		case "messages":
			return apierrors.Messages
		case "google":
			return apierrors.Google
		}
		return apierrors.General
	}
	b := setup(t, auth.WithErrorShape(shapeOf))

	tests := []struct {
		name   string
		header map[string][]string
		query  string
		status int
		want   string // a fragment of the body
	}{
		{"MessagesMissing", nil, "shape=messages", 401, `{"type":"error","error":{"type":"authentication_error"`},
		{"MessagesMissingNamesItsHeader", nil, "shape=messages", 401, `Send it in the x-api-key header.`},
		{"GoogleMissingNamesItsHeader", nil, "shape=google", 401, `Send it in the x-goog-api-key header or the key query parameter.`},
		{"MessagesQuota", map[string][]string{"X-Api-Key": {"{key_broke}"}}, "shape=messages", 403, `"type":"permission_error"`},
		{"GoogleUnknownKey", map[string][]string{"X-Goog-Api-Key": {"sk-unknown"}}, "shape=google", 401, `"status":"UNAUTHENTICATED"`},
		{"GoogleQuota", nil, "shape=google&key={key_broke}", 403, `"status":"RESOURCE_EXHAUSTED"`},
		{"GeneralByDefault", nil, "", 401, `"code":"missing_authorization"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := b.do(tc.header, tc.query)
			require.Equal(t, tc.status, w.Code)
			require.True(t, json.Valid(w.Body.Bytes()), w.Body.String())
			require.True(t, strings.Contains(w.Body.String(), tc.want), "body %s lacks %s", w.Body.String(), tc.want)
			if tc.status == 401 {
				require.NotEmpty(t, w.Header().Get("WWW-Authenticate"), "every shape keeps the challenge")
			}
		})
	}
}
