package gateway_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/telemetry"
	"github.com/gatewaykit/gatewaykit/videos"
)

// consoleSessions accepts the cookie console=<account> as a session of
// that account.
var consoleSessions = auth.SessionAuthenticatorFunc(func(r *http.Request) (*auth.Principal, error) {
	c, err := r.Cookie("console")
	if err != nil {
		return nil, nil
	}
	return &auth.Principal{KeyID: "console:" + c.Value, Owner: c.Value}, nil
})

// TestContentSessions: with Config.ContentSessions, a request that
// carries an admin-console session and no API key downloads the content
// of its account's task, and is refused, as a request without any
// credential, on every other route of the gateway.
func TestContentSessions(t *testing.T) {
	t.Parallel()
	b := newOutageBundle(t, func(c *gateway.Config) { c.ContentSessions = consoleSessions })
	send := func(method, path, account string) (*httptest.ResponseRecorder, *telemetry.Info) {
		req := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(&http.Cookie{Name: "console", Value: account})
		info := new(telemetry.Info)
		req = req.WithContext(telemetry.NewContext(req.Context(), info))
		rec := httptest.NewRecorder()
		b.g.ServeHTTP(rec, req)
		return rec, info
	}

	content := "/v1/videos/" + b.task + "/content"
	rec, info := send("GET", content, "demo")
	require.Equal(t, http.StatusOK, rec.Code, "body: %s", rec.Body)
	require.Equal(t, "mp4", rec.Body.String(), "the video of the account's task")
	require.Equal(t, "console:demo", info.KeyID)
	rec, _ = send("HEAD", content, "demo")
	require.Equal(t, http.StatusOK, rec.Code)
	rec, _ = send("GET", content, "another")
	require.Equal(t, http.StatusNotFound, rec.Code, "another account's session sees no such task: %s", rec.Body)

	// Every other route: a path for each pattern, and its method.
	others := map[string]string{
		"GET /v1/models": "/v1/models", "GET /v1/models/{id...}": "/v1/models/demo-chat",
		"GET /v1beta/models": "/v1beta/models", "GET /v1beta/models/{id...}": "/v1beta/models/demo-chat",
		"POST /v1/chat/completions": "/v1/chat/completions", "POST /v1/completions": "/v1/completions",
		"POST /v1/responses": "/v1/responses", "POST /v1/responses/compact": "/v1/responses/compact",
		"GET /v1/responses/{response_id}": "/v1/responses/resp_1", "DELETE /v1/responses/{response_id}": "/v1/responses/resp_1",
		"GET /v1/responses/{response_id}/input_items": "/v1/responses/resp_1/input_items",
		"POST /v1/responses/{response_id}/cancel":     "/v1/responses/resp_1/cancel",
		"POST /v1/videos": "/v1/videos", "GET /v1/videos": "/v1/videos",
		"GET /v1/videos/{task_id}": "/v1/videos/" + b.task, "DELETE /v1/videos/{task_id}": "/v1/videos/" + b.task,
		"POST /v1/vendorai/videos": "/v1/vendorai/videos", "POST /v1/vendor/videos": "/v1/vendor/videos",
		"POST /v1/embeddings": "/v1/embeddings", "POST /v1/images/generations": "/v1/images/generations",
		"GET /v1/images/files/{name}":   "/v1/images/files/x.png",
		"POST /v1/audio/transcriptions": "/v1/audio/transcriptions", "POST /v1/audio/translations": "/v1/audio/translations",
		"POST /v1/audio/speech": "/v1/audio/speech", "POST /v1/moderations": "/v1/moderations", "POST /v1/rerank": "/v1/rerank",
		"POST /v1/messages": "/v1/messages", "POST /v1beta/models/{action...}": "/v1beta/models/demo-chat:generateContent",
	}
	covered := []string{videos.PatternContent}
	for _, pattern := range slices.Sorted(maps.Keys(others)) {
		method, _, _ := strings.Cut(pattern, " ")
		rec, info := send(method, others[pattern], "demo")
		covered = append(covered, info.Route)
		require.Equal(t, http.StatusUnauthorized, rec.Code, "%s: %s", pattern, rec.Body)
		require.Equal(t, "Bearer", rec.Header().Get("WWW-Authenticate"), pattern)
		require.Contains(t, rec.Body.String(), "API key", pattern)
	}
	require.Empty(t, cmpRoutes(everyRoute(), covered), "routes the table misses")
}
