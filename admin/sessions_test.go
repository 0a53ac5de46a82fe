package admin_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/admin"
	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// withCookie is a request that carries the session token, if any.
func withCookie(token string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/videos/task_1/content", nil)
	if token != "" {
		r.AddCookie(&http.Cookie{Name: admin.SessionCookie, Value: token})
	}
	return r
}

func TestSessions(t *testing.T) {
	t.Parallel()
	s := admin.NewSessions(adminKey, time.Hour)
	now := time.Now()
	valid, expires, err := s.Mint("acme", now)
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Hour).Truncate(time.Second), expires)
	expired, _, err := s.Mint("acme", now.Add(-2*time.Hour))
	require.NoError(t, err)
	foreign, _, err := admin.NewSessions("another-admin-key", time.Hour).Mint("acme", now)
	require.NoError(t, err)
	forged := "v1.Zm9v" + valid[len("v1.YWNtZQ"):] // acme's signature on foo
	require.True(t, strings.HasPrefix(valid, "v1.YWNtZQ."), valid)

	tests := []struct {
		name    string
		token   string
		want    *auth.Principal
		refused bool
	}{
		{name: "AValidSessionIsItsAccount", token: valid, want: &auth.Principal{KeyID: "console:acme", Owner: "acme"}},
		{name: "NoCookieIsNoSession", token: ""},
		{name: "AnExpiredSessionIsRefused", token: expired, refused: true},
		{name: "AnotherAdminKeysSessionIsRefused", token: foreign, refused: true},
		{name: "AnEditedSessionIsRefused", token: forged, refused: true},
		{name: "GarbageIsRefused", token: "v1.", refused: true},
		{name: "ATruncatedSessionIsRefused", token: valid[:len(valid)-1], refused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := s.AuthenticateSession(withCookie(tc.token))
			if tc.refused {
				require.Nil(t, p)
				e := apierrors.From(err)
				require.Equal(t, apierrors.CodeInvalidAPIKey, e.Code)
				require.Equal(t, "The admin-console session is invalid or has expired. Sign in to the admin console again, or send an API key.", e.Message)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p)
		})
	}
}

func TestSessionsRefuseBadOwners(t *testing.T) {
	t.Parallel()
	s := admin.NewSessions(adminKey, 0)
	now := time.Now()
	_, expires, err := s.Mint("acme", now)
	require.NoError(t, err)
	require.Equal(t, now.Add(admin.DefaultSessionTTL).Truncate(time.Second), expires, "the default TTL")
	for _, owner := range []string{"", strings.Repeat("a", 257), "a\nb", "\xff"} {
		_, _, err := s.Mint(owner, time.Now())
		require.Error(t, err, "%q", owner)
	}
	require.PanicsWithValue(t, "admin: NewSessions: empty admin key", func() { admin.NewSessions("", 0) })
}

func TestCreateSession(t *testing.T) {
	t.Parallel()
	sessions := admin.NewSessions(adminKey, time.Hour)
	b := setup(t, admin.WithSessions(sessions))

	status, _, body := b.do(t, http.MethodPost, "/admin/v1/sessions", `{"owner":"acme"}`)
	require.Equal(t, http.StatusCreated, status, "%s", body)
	var got struct {
		Object, Owner, Cookie, Token string
		ExpiresAt                    int64 `json:"expires_at"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	require.Equal(t, "session", got.Object)
	require.Equal(t, "acme", got.Owner)
	require.Equal(t, admin.SessionCookie, got.Cookie)
	require.InDelta(t, time.Now().Add(time.Hour).Unix(), got.ExpiresAt, 5)
	p, err := sessions.AuthenticateSession(withCookie(got.Token))
	require.NoError(t, err)
	require.Equal(t, "acme", p.Owner, "the token minted is a session of the account")

	for _, tc := range []struct{ body, param string }{
		{`{}`, "owner"},
		{`{"owner":""}`, "owner"},
		{`{"owner":7}`, "owner"},
		{`{"owner":"acme","ttl":60}`, "ttl"},
		{`[]`, ""},
	} {
		status, _, body := b.do(t, http.MethodPost, "/admin/v1/sessions", tc.body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", tc.body, body)
		e := decodeError(t, body)
		require.Equal(t, "invalid_request_error", e.Error.Code, tc.body)
		if tc.param != "" {
			require.Equal(t, tc.param, *e.Error.Param, tc.body)
		}
	}
	status, _, _ = b.do(t, http.MethodPost, "/admin/v1/sessions", `{"owner":"acme"}`, "Bearer wrong")
	require.Equal(t, http.StatusUnauthorized, status, "only the admin key mints sessions")
	status, header, _ := b.do(t, http.MethodGet, "/admin/v1/sessions", "")
	require.Equal(t, http.StatusMethodNotAllowed, status)
	require.Equal(t, "POST", header.Get("Allow"))
}

func TestNoSessionsWithoutTheOption(t *testing.T) {
	t.Parallel()
	status, _, body := setup(t).do(t, http.MethodPost, "/admin/v1/sessions", `{"owner":"acme"}`)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "not_found", decodeError(t, body).Error.Code)
}
