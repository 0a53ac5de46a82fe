package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

// SessionCookie is the cookie that carries an admin-console session to
// the gateway's video content route.
const SessionCookie = "gatewaykit_session"

// DefaultSessionTTL is how long a session minted by [NewSessions] with no
// other TTL lasts.
const DefaultSessionTTL = time.Hour

// sessionKeyIDPrefix starts the Principal.KeyID of every session.
const sessionKeyIDPrefix = "console:"

// maxOwnerBytes bounds the account a session names.
const maxOwnerBytes = 256

// Sessions mints and checks the admin console's sessions: what the spec
// lets the video content route accept in place of an API key (§4.7,
// §5.3). A session is minted by the admin API (POST /admin/v1/sessions,
// with [WithSessions]) for one account, the Owner of API keys, and
// lasts its TTL; a request carries it in the cookie [SessionCookie].
// Sessions is an auth.SessionAuthenticator: give it to the gateway's
// content route (gateway.Config.ContentSessions), and to no other.
//
// A session is stateless: its account and expiry, signed with HMAC-SHA256
// under a key derived from the admin key, so that every replica with the
// same admin key accepts the sessions of the others, and changing the
// admin key revokes them all. A session is a bearer credential, its
// account in clear: whoever holds it downloads that account's videos
// until it expires, and nothing else. Sessions is safe for concurrent
// use.
type Sessions struct {
	key [sha256.Size]byte
	ttl time.Duration
}

// NewSessions returns the sessions of the admin key adminKey, which last
// ttl (≤ 0: [DefaultSessionTTL]). It panics if adminKey is empty.
func NewSessions(adminKey string, ttl time.Duration) *Sessions {
	if adminKey == "" {
		panic("admin: NewSessions: empty admin key")
	}
	if ttl <= 0 {
		ttl = DefaultSessionTTL
	}
	mac := hmac.New(sha256.New, []byte(adminKey))
	mac.Write([]byte("gatewaykit admin-console session v1"))
	s := &Sessions{ttl: ttl}
	copy(s.key[:], mac.Sum(nil))
	return s
}

// Mint returns a session of account owner, minted at now, and when it
// expires: "v1.<owner, base64url>.<expiry, Unix seconds>.<signature,
// base64url>". owner, an account, must be 1 to 256 bytes of UTF-8 without
// control characters; anything else is an error that says so.
func (s *Sessions) Mint(owner string, now time.Time) (token string, expires time.Time, err error) {
	if err := validOwner(owner); err != nil {
		return "", time.Time{}, err
	}
	expires = now.Add(s.ttl).Truncate(time.Second)
	body := "v1." + base64.RawURLEncoding.EncodeToString([]byte(owner)) + "." + strconv.FormatInt(expires.Unix(), 10)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.sign(body)), expires, nil
}

func (s *Sessions) sign(body string) []byte {
	mac := hmac.New(sha256.New, s.key[:])
	mac.Write([]byte(body))
	return mac.Sum(nil)
}

// validOwner reports, as an error naming what is wrong, whether owner can
// be the account of a session.
func validOwner(owner string) error {
	switch {
	case owner == "":
		return errors.New("admin: an empty owner")
	case len(owner) > maxOwnerBytes:
		return errors.New("admin: an owner longer than 256 bytes")
	case !utf8.ValidString(owner) || strings.ContainsFunc(owner, unicode.IsControl):
		return errors.New("admin: an owner that is not printable UTF-8")
	}
	return nil
}

// msgBadSession is the message of a session that is forged, malformed or
// expired.
const msgBadSession = "The admin-console session is invalid or has expired. Sign in to the admin console again, or send an API key."

// AuthenticateSession implements auth.SessionAuthenticator: it returns the
// principal of the session in r's cookie [SessionCookie], an account's
// ("console:" + owner as its KeyID, in logs and under which the
// middleware rate-limits it; owner as its Owner, so that it sees the
// tasks of the account's keys: auth.AccountOwner), nil if r has no such
// cookie, and a 401 invalid_api_key for a session that is forged,
// malformed or expired.
func (s *Sessions) AuthenticateSession(r *http.Request) (*auth.Principal, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return nil, nil
	}
	owner, err := s.check(c.Value, time.Now())
	if err != nil {
		return nil, apierrors.InvalidAPIKey(msgBadSession).WithCause(err)
	}
	return &auth.Principal{KeyID: sessionKeyIDPrefix + owner, Owner: owner}, nil
}

// check returns the account of token, a session valid at now.
func (s *Sessions) check(token string, now time.Time) (string, error) {
	body, sig, ok := cutLast(token, ".")
	if !ok || !strings.HasPrefix(body, "v1.") {
		return "", errors.New("admin: a malformed session")
	}
	want, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(want, s.sign(body)) {
		return "", errors.New("admin: a session not signed with this admin key")
	}
	enc, exp, _ := cutLast(body[len("v1."):], ".")
	owner, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", errors.New("admin: a malformed session")
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return "", errors.New("admin: a malformed session")
	}
	if !now.Before(time.Unix(unix, 0)) {
		return "", errors.New("admin: an expired session")
	}
	return string(owner), nil
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// session is the reply of POST /admin/v1/sessions.
type session struct {
	Object    string `json:"object"`
	Owner     string `json:"owner"`
	Cookie    string `json:"cookie"`
	Token     string `json:"token"`
	ExpiresAt int64  `json:"expires_at"`
}

// createSession serves POST /admin/v1/sessions: {"owner": "acme"}.
func (h *handler) createSession(w http.ResponseWriter, r *http.Request) {
	owner, err := h.decodeSession(w, r)
	if err != nil {
		h.rd.Write(w, r, err)
		return
	}
	token, expires, err := h.cfg.sessions.Mint(owner, time.Now())
	if err != nil {
		h.rd.Write(w, r, apierrors.InvalidRequest("owner", "Invalid owner: want 1 to 256 bytes of printable UTF-8.").WithCause(err))
		return
	}
	_ = httpjson.Write(w, http.StatusCreated, session{Object: "session", Owner: owner, Cookie: SessionCookie, Token: token, ExpiresAt: expires.Unix()})
}

// decodeSession reads the owner of a POST /admin/v1/sessions.
func (h *handler) decodeSession(w http.ResponseWriter, r *http.Request) (string, error) {
	body, err := httpjson.ReadJSON(w, r, h.cfg.maxBytes)
	if err != nil {
		return "", err
	}
	var members map[string]json.RawMessage
	if err := httpjson.Unmarshal(body, &members); err != nil {
		return "", err
	}
	if members == nil {
		return "", apierrors.InvalidRequest("", "The request body must be a JSON object.")
	}
	for name := range members {
		if name != "owner" {
			return "", apierrors.InvalidRequestf(name, "Unrecognized request argument supplied: %s. The field is owner.", name)
		}
	}
	var owner string
	if raw, ok := members["owner"]; !ok || json.Unmarshal(raw, &owner) != nil {
		return "", apierrors.InvalidRequest("owner", "owner is required: a string naming the account (the owner of API keys) whose video content the session may download.")
	}
	return owner, nil
}
