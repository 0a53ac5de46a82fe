package auth_test

import (
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// keyPattern is the documented key alphabet, written independently of
// auth.ValidSecret.
var keyPattern = regexp.MustCompile(`^sk-[A-Za-z0-9_-]+$`)

func credRequest(authz, xAPIKey, goog, rawQuery string) *http.Request {
	h := http.Header{}
	// Assign directly, so that values net/http would refuse reach the
	// parser too.
	for k, v := range map[string]string{"Authorization": authz, "X-Api-Key": xAPIKey, "X-Goog-Api-Key": goog} {
		if v != "" {
			h[k] = []string{v}
		}
	}
	return &http.Request{Header: h, URL: &url.URL{Path: "/v1/models", RawQuery: rawQuery}}
}

// knownMessages are all the messages ParseCredential may send: errors
// must use one of them, which proves they echo nothing of the request.
func knownMessages(t testing.TB) map[string]bool {
	t.Helper()
	msgs := make(map[string]bool)
	add := func(r *http.Request) {
		_, err := auth.ParseCredential(r)
		var e *apierrors.Error
		require.ErrorAs(t, err, &e)
		msgs[e.Message] = true
	}
	add(credRequest("", "", "", ""))
	add(credRequest("Basic x", "", "", ""))
	add(credRequest("Bearer", "", "", ""))
	add(credRequest("Bearer x", "", "", ""))
	add(credRequest("", "x", "", ""))
	add(credRequest("", "", "x", ""))
	add(credRequest("", "", "", "key=x"))
	add(&http.Request{Header: http.Header{"Authorization": {"a", "b"}}, URL: &url.URL{}})
	add(&http.Request{Header: http.Header{"X-Api-Key": {"a", "b"}}, URL: &url.URL{}})
	add(&http.Request{Header: http.Header{"X-Goog-Api-Key": {"a", "b"}}, URL: &url.URL{}})
	add(credRequest("", "", "", "key=a&key=b"))
	require.Len(t, msgs, 11)
	return msgs
}

func FuzzParseCredential(f *testing.F) {
	f.Add("Bearer sk-abc", "", "", "", "abc")
	f.Add("bearer  sk-abc_DEF-123 ", "sk-x", "", "key=sk-y", "Zz09-_")
	f.Add("Basic dXNlcjpwYXNz", "sk-abc", "", "", "")
	f.Add("", "sk-abc", "sk-def", "key=sk-ghi", "k")
	f.Add("", "", "", "key=sk-a%20b&key=sk-c", "é")
	f.Add("Bearer sk-\x00", "", "", "%zz&key=sk-q", strings.Repeat("a", 300))
	f.Add("Bearer\tsk-abc", " ", "\t", "key=", "sk-")
	msgs := knownMessages(f)

	f.Fuzz(func(t *testing.T, authz, xAPIKey, goog, rawQuery, tail string) {
		c, err := auth.ParseCredential(credRequest(authz, xAPIKey, goog, rawQuery))
		if err != nil {
			var e *apierrors.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, http.StatusUnauthorized, e.Status)
			require.True(t, msgs[e.Message], "unexpected message %q", e.Message)
			require.True(t, errors.Is(err, auth.ErrMissingCredentials) || errors.Is(err, auth.ErrMalformedCredential))
			require.Equal(t, auth.Credential{}, c)
		} else {
			require.Regexp(t, keyPattern, c.Secret)
			require.LessOrEqual(t, len(c.Secret), auth.MaxKeyLength)
			require.Equal(t, firstSource(authz, xAPIKey, goog, rawQuery), c.Kind)
		}

		// A valid key built from tail round-trips through every source.
		key := validKeyFrom(tail)
		for _, tc := range []struct {
			r    *http.Request
			kind auth.CredentialKind
		}{
			{credRequest("Bearer "+key, "", "", ""), auth.CredentialBearer},
			{credRequest("", key, "", ""), auth.CredentialXAPIKey},
			{credRequest("", "", key, ""), auth.CredentialGoogAPIKey},
			{credRequest("", "", "", url.Values{"key": {key}}.Encode()), auth.CredentialQueryKey},
		} {
			got, err := auth.ParseCredential(tc.r)
			require.NoError(t, err)
			require.Equal(t, auth.Credential{Kind: tc.kind, Secret: key}, got)
		}
	})
}

// firstSource is the documented precedence: the first source with a
// non-blank value.
func firstSource(authz, xAPIKey, goog, rawQuery string) auth.CredentialKind {
	present := func(v string) bool { return strings.Trim(v, " \t") != "" }
	switch {
	case present(authz):
		return auth.CredentialBearer
	case present(xAPIKey):
		return auth.CredentialXAPIKey
	case present(goog):
		return auth.CredentialGoogAPIKey
	}
	q, _ := url.ParseQuery(rawQuery)
	for _, v := range q["key"] {
		if present(v) {
			return auth.CredentialQueryKey
		}
	}
	return 0
}

// validKeyFrom keeps the alphabet's bytes of s, at least one, and cuts
// the key to the longest length allowed.
func validKeyFrom(s string) string {
	var b strings.Builder
	b.WriteString(auth.KeyPrefix)
	for i := 0; i < len(s) && b.Len() < auth.MaxKeyLength; i++ {
		if c := s[i]; c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		}
	}
	if b.Len() == len(auth.KeyPrefix) {
		b.WriteByte('x')
	}
	return b.String()
}

func TestValidSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"Minted", "sk-AbC_123-xyz", true},
		{"ProjectStyle", "sk-proj-abc_DEF", true},
		{"LongestAllowed", "sk-" + strings.Repeat("a", auth.MaxKeyLength-3), true},
		{"TooLong", "sk-" + strings.Repeat("a", auth.MaxKeyLength-2), false},
		{"PrefixOnly", "sk-", false},
		{"Empty", "", false},
		{"WrongPrefix", "pk-abc", false},
		{"UpperCasePrefix", "SK-abc", false},
		{"Space", "sk-ab c", false},
		{"Dot", "sk-ab.c", false},
		{"Plus", "sk-ab+c", false},
		{"NUL", "sk-ab\x00", false},
		{"NonASCII", "sk-abé", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, auth.ValidSecret(tc.in))
		})
	}
}

func TestCredentialKindString(t *testing.T) {
	t.Parallel()
	want := map[auth.CredentialKind]string{
		0:                         "none",
		auth.CredentialBearer:     "bearer",
		auth.CredentialXAPIKey:    "x-api-key",
		auth.CredentialGoogAPIKey: "x-goog-api-key",
		auth.CredentialQueryKey:   "query",
		auth.CredentialSession:    "session",
	}
	for k, s := range want {
		require.Equal(t, s, k.String())
	}
}
