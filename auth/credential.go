package auth

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// KeyPrefix starts every API key.
const KeyPrefix = "sk-"

// MaxKeyLength is the longest API key accepted, in bytes, prefix included.
const MaxKeyLength = 256

// Errors returned (as the cause of an *apierrors.Error) by
// [ParseCredential].
var (
	// ErrMissingCredentials: the request carries no credential at all.
	ErrMissingCredentials = errors.New("auth: missing credentials")
	// ErrMalformedCredential: a credential is present but is not a
	// well-formed API key, uses another scheme than Bearer, or is sent
	// more than once.
	ErrMalformedCredential = errors.New("auth: malformed credential")
)

// CredentialKind says where a request's credential came from.
type CredentialKind uint8

// The credential kinds, in order of precedence (see [ParseCredential]).
// The zero value is no credential.
const (
	// CredentialBearer is the header Authorization: Bearer <key>.
	CredentialBearer CredentialKind = iota + 1
	// CredentialXAPIKey is the header x-api-key (messages-format clients).
	CredentialXAPIKey
	// CredentialGoogAPIKey is the header x-goog-api-key (Gemini-style
	// clients).
	CredentialGoogAPIKey
	// CredentialQueryKey is the query parameter key (Gemini-style
	// clients).
	CredentialQueryKey
	// CredentialSession is an admin-console session accepted by a
	// [SessionAuthenticator]; it is never returned by ParseCredential.
	CredentialSession
	// CredentialIdentity is an embedder's own identity, which names a key
	// by its id ([Identities]); it is never returned by ParseCredential.
	CredentialIdentity
)

// String returns the name used in logs: "bearer", "x-api-key",
// "x-goog-api-key", "query", "session", "identity", or "none".
func (k CredentialKind) String() string {
	switch k {
	case CredentialBearer:
		return "bearer"
	case CredentialXAPIKey:
		return "x-api-key"
	case CredentialGoogAPIKey:
		return "x-goog-api-key"
	case CredentialQueryKey:
		return "query"
	case CredentialSession:
		return "session"
	case CredentialIdentity:
		return "identity"
	default:
		return "none"
	}
}

// where names the credential's source in client-facing messages.
func (k CredentialKind) where() string {
	switch k {
	case CredentialBearer:
		return "the Authorization header"
	case CredentialXAPIKey:
		return "the x-api-key header"
	case CredentialGoogAPIKey:
		return "the x-goog-api-key header"
	case CredentialQueryKey:
		return "the key query parameter"
	default:
		return "the request"
	}
}

// Credential is an API key read from a request, and where it was found.
// Its String, GoString and LogValue methods redact the secret, so that
// printing or logging a Credential never leaks it.
type Credential struct {
	Kind   CredentialKind
	Secret string
}

// String returns the kind and a redacted secret.
func (c Credential) String() string { return c.Kind.String() + " [REDACTED]" }

// GoString is String, so that %#v redacts too.
func (c Credential) GoString() string { return c.String() }

// LogValue implements slog.LogValuer: the kind only.
func (c Credential) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kind", c.Kind.String()))
}

// Client-facing messages. None of them may contain the secret.
const (
	msgMissing = "You didn't provide an API key. Send it in the Authorization header using the Bearer scheme: 'Authorization: Bearer sk-...'."
	// The same, for clients of the messages and Gemini formats.
	msgMissingMessages = "You didn't provide an API key. Send it in the x-api-key header."
	msgMissingGoogle   = "You didn't provide an API key. Send it in the x-goog-api-key header or the key query parameter."
	msgScheme          = "The Authorization header must use the Bearer scheme: 'Authorization: Bearer sk-...'."
	msgEmpty           = "The Authorization header uses the Bearer scheme but carries no API key."
)

func msgDuplicate(k CredentialKind) string {
	return "More than one value was sent in " + k.where() + "; send exactly one API key."
}

func msgMalformed(k CredentialKind) string {
	return "Malformed API key in " + k.where() + ": an API key starts with 'sk-', followed by letters, digits, '-' or '_', and is at most " +
		strconv.Itoa(MaxKeyLength) + " characters long."
}

// ParseCredential reads the API key of r from its headers and URL. It is
// a pure function of r's headers and query; it does not look the key up.
//
// Precedence: the first of these sources that is present (has a
// non-empty value) is used and the others are ignored, even when the one
// used turns out to be invalid (there is no fallback from one to the
// next):
//
//  1. header Authorization (must be "Bearer <key>", scheme case-insensitive)
//  2. header x-api-key
//  3. header x-goog-api-key
//  4. query parameter key
//
// A key is well-formed if it starts with [KeyPrefix], continues with at
// least one character of A–Z, a–z, 0–9, '-' and '_', and is at most
// [MaxKeyLength] bytes long ([ValidSecret]).
//
// Errors are *apierrors.Error values ready to render: 401
// missing_authorization (cause [ErrMissingCredentials]) when no source is
// present, and 401 invalid_api_key (cause [ErrMalformedCredential]) for a
// scheme other than Bearer, a malformed key, or a source sent more than
// once. Their messages never contain the secret.
func ParseCredential(r *http.Request) (Credential, error) {
	if v, n := values(r.Header, "Authorization"); n > 0 {
		if n > 1 {
			return Credential{}, malformed(msgDuplicate(CredentialBearer))
		}
		return parseBearer(v)
	}
	for _, src := range [...]struct {
		header string
		kind   CredentialKind
	}{
		{"X-Api-Key", CredentialXAPIKey},
		{"X-Goog-Api-Key", CredentialGoogAPIKey},
	} {
		if v, n := values(r.Header, src.header); n > 0 {
			return credential(src.kind, v, n)
		}
	}
	if r.URL != nil {
		if v, n := values(r.URL.Query(), "key"); n > 0 {
			return credential(CredentialQueryKey, v, n)
		}
	}
	return Credential{}, apierrors.MissingAuthorization(msgMissing).WithCause(ErrMissingCredentials)
}

// values returns the first non-empty value of m[name] (after trimming
// blanks) and how many non-empty values there are.
func values(m map[string][]string, name string) (first string, n int) {
	for _, v := range m[name] {
		if v = strings.Trim(v, " \t"); v != "" {
			if n == 0 {
				first = v
			}
			n++
		}
	}
	return first, n
}

func credential(kind CredentialKind, v string, n int) (Credential, error) {
	if n > 1 {
		return Credential{}, malformed(msgDuplicate(kind))
	}
	if !ValidSecret(v) {
		return Credential{}, malformed(msgMalformed(kind))
	}
	return Credential{Kind: kind, Secret: v}, nil
}

func parseBearer(v string) (Credential, error) {
	scheme, token := v, ""
	if i := strings.IndexAny(v, " \t"); i >= 0 {
		scheme, token = v[:i], strings.Trim(v[i:], " \t")
	}
	if !strings.EqualFold(scheme, "Bearer") {
		return Credential{}, malformed(msgScheme)
	}
	if token == "" {
		return Credential{}, malformed(msgEmpty)
	}
	return credential(CredentialBearer, token, 1)
}

func malformed(msg string) *apierrors.Error {
	return apierrors.InvalidAPIKey(msg).WithCause(ErrMalformedCredential)
}

// ValidSecret reports whether s is a well-formed API key: [KeyPrefix],
// then one or more of A–Z, a–z, 0–9, '-' and '_', at most [MaxKeyLength]
// bytes in all. It does not say whether the key exists.
func ValidSecret(s string) bool {
	if len(s) <= len(KeyPrefix) || len(s) > MaxKeyLength || !strings.HasPrefix(s, KeyPrefix) {
		return false
	}
	for i := len(KeyPrefix); i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
