// Package openaitest holds the helpers of the tests that drive the kit's
// handlers with the official OpenAI Go SDK (github.com/openai/openai-go):
// a server in front of a handler, with keys, and a client of it. It lives
// in module github.com/gatewaykit/gatewaykit/sdk, with those tests, so
// that the SDK stays out of the kit's go.mod.
package openaitest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
)

// SDKServer starts a server like the example server's: auth.Middleware,
// with an in-memory key store that holds keys, in front of h. It returns
// the server, closed when the test ends, and the secrets of the keys, in
// their order.
func SDKServer(t *testing.T, h http.Handler, keys ...auth.Key) (*httptest.Server, []string) {
	t.Helper()
	store := auth.NewMemoryKeyStore()
	secrets := make([]string, len(keys))
	for i, k := range keys {
		secret, err := auth.NewSecret()
		require.NoError(t, err)
		require.NoError(t, store.Add(t.Context(), secret, k))
		secrets[i] = secret
	}
	srv := httptest.NewServer(auth.Middleware(store)(h))
	t.Cleanup(srv.Close)
	return srv, secrets
}

// SDKClient returns an official SDK client of srv that sends secret and
// never retries.
func SDKClient(srv *httptest.Server, secret string) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(srv.URL+"/v1/"),
		option.WithAPIKey(secret),
		option.WithMaxRetries(0),
		option.WithHTTPClient(srv.Client()),
	)
}

// NewSDKClient starts an [SDKServer] in front of h with one key of
// unlimited quota (id key_sdk), and returns an [SDKClient] of it that
// sends the key's secret, or key(secret) when key is not nil.
func NewSDKClient(t *testing.T, h http.Handler, key func(secret string) string) openai.Client {
	t.Helper()
	srv, secrets := SDKServer(t, h, auth.Key{ID: "key_sdk", Quota: auth.UnlimitedQuota()})
	secret := secrets[0]
	if key != nil {
		secret = key(secret)
	}
	return SDKClient(srv, secret)
}

// RequireAPIError checks that err is an error of the SDK for an answer
// of status whose error has code and param, and returns it.
func RequireAPIError(t testing.TB, err error, status int, code, param string) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, status, apiErr.StatusCode)
	require.Equal(t, code, apiErr.Code)
	require.Equal(t, param, apiErr.Param)
	return apiErr
}
