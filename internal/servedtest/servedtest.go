// Package servedtest holds the test helpers of the served access points
// (packages embeddings, moderations, rerank, images, audio): requests
// through a handler, golden files, error bodies.
package servedtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// Update is the -update flag of the packages' tests, [golden.Update]:
// rewrite the golden files instead of comparing with them.
var Update = golden.Update

// Do sends a request with body and content type ct ("" for none) to h
// and returns the recorder.
func Do(h http.Handler, method, path, ct string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// PostJSON posts the JSON body to path on h.
func PostJSON(h http.Handler, path, body string) *httptest.ResponseRecorder {
	return Do(h, http.MethodPost, path, "application/json", []byte(body))
}

// Golden compares the JSON got with the golden file path (decoded, with
// cmp.Diff), or rewrites the file, indented, with -update: [golden.JSON].
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	golden.JSON(t, path, got)
}

// ErrorBody is the general error envelope.
type ErrorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    string  `json:"code"`
	} `json:"error"`
}

// RequireError checks that w holds an error of status and code whose
// param is param ("" for null) and whose message contains msg.
func RequireError(t *testing.T, w *httptest.ResponseRecorder, status int, code, param, msg string) {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	require.Equal(t, "application/json", w.Header().Get("Content-Type"))
	var e ErrorBody
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e), w.Body.String())
	require.Equal(t, code, e.Error.Code, w.Body.String())
	if param == "" {
		require.Nil(t, e.Error.Param, w.Body.String())
	} else {
		require.NotNil(t, e.Error.Param, w.Body.String())
		require.Equal(t, param, *e.Error.Param)
	}
	require.True(t, strings.Contains(e.Error.Message, msg), "message %q does not contain %q", e.Error.Message, msg)
}

// Secret is the API key of [Keyed] handlers.
const Secret = "sk-servedtest-0123456789"

// Keys is an in-memory key store that records every settlement.
type Keys struct {
	*auth.MemoryKeyStore
	mu      sync.Mutex
	settled []auth.SettleParams
}

// Settle records p and settles it.
func (k *Keys) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	k.mu.Lock()
	k.settled = append(k.settled, p)
	k.mu.Unlock()
	return k.MemoryKeyStore.Settle(ctx, p)
}

// Settled returns the settlements so far.
func (k *Keys) Settled() []auth.SettleParams {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.settled)
}

// Quota returns the key's quota now.
func (k *Keys) Quota(t *testing.T) auth.Quota {
	t.Helper()
	key, err := k.Lookup(context.Background(), Secret)
	require.NoError(t, err)
	return key.Quota
}

// Keyed puts auth.Middleware, with one key of quota q (id "key_test",
// secret [Secret]), in front of h, and returns the handler, which sends
// the key with every request, and the store.
func Keyed(t *testing.T, h http.Handler, q auth.Quota) (http.Handler, *Keys) {
	t.Helper()
	keys := &Keys{MemoryKeyStore: auth.NewMemoryKeyStore()}
	require.NoError(t, keys.Add(context.Background(), Secret, auth.Key{ID: "key_test", Quota: q}))
	mw := auth.Middleware(keys)(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+Secret)
		mw.ServeHTTP(w, r)
	}), keys
}
