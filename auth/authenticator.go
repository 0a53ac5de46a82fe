package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// An Authenticator turns a request into the [Principal] that makes it:
// the seam through which [Middleware] accepts any identity. [APIKeys]
// reads API keys, [Identities] an embedder's own identity (a session
// cookie, a JWT, an upstream proxy's header) charged like a key; an
// embedder may write others. Implementations must be safe for concurrent
// use, and must not read the request's body or write anything.
//
// Authenticate returns
//
//   - (nil, nil) when r carries no credential of its kind: the middleware
//     asks the next authenticator, and answers 401 missing_authorization
//     when none is left;
//   - (p, nil) to authenticate r as p, which the middleware copies (it
//     never changes p), puts in the request context and treats as it
//     treats an API key's: it reports p.KeyID to [WithKeyObserver] and the
//     telemetry, refuses a request that spends with 403
//     insufficient_quota when p.Keys is set and p.Quota is exhausted,
//     and rate-limits p under the limiter key p.KeyID ("session:" + KeyID
//     for a [CredentialSession]) with p.RateLimit: Requests > 0 is its
//     own limit, 0 the middleware's default ([WithDefaultRateLimit]),
//     < 0 none. [Reserve], [Charge] and [Settle] then charge p.Keys.
//   - (p, err) with err ≠ nil to refuse r; no other authenticator is
//     asked. An *apierrors.Error is sent as it is, in the request's error
//     shape (a 401 with WWW-Authenticate). An error wrapping
//     [ErrKeyNotFound], [ErrKeyDisabled] or [ErrKeyExpired] is sent as the
//     middleware's 401 invalid_api_key for an unknown, disabled or expired
//     API key. Any other error is the outage of what the authenticator
//     asks (a store, an identity provider): 503 service_unavailable with
//     Retry-After, its text logged and not sent (or nothing, or 504, when
//     the request itself has ended). p may be nil; if not, it is who was
//     refused (a disabled key's principal), which the middleware reports
//     to WithKeyObserver and the telemetry.
type Authenticator interface {
	Authenticate(r *http.Request) (*Principal, error)
}

// AuthenticatorFunc adapts a function to [Authenticator].
type AuthenticatorFunc func(r *http.Request) (*Principal, error)

// Authenticate calls f(r).
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*Principal, error) { return f(r) }

// Client-facing messages of [Identities]. None names the identity.
const (
	msgUnknownIdentity  = "The identity of this request has no key at the gateway."
	msgDisabledIdentity = "The key of this request's identity has been disabled."
	msgExpiredIdentity  = "The key of this request's identity has expired."
)

// APIKeys returns the [Authenticator] of the API keys of keys, which
// [Middleware] uses by default: it reads the request's API key with
// [ParseCredential] (none: no credential of its kind; a malformed one:
// 401 invalid_api_key), looks it up ([KeyStore.Lookup]), and returns the
// key's principal, charged to keys ([Principal].Keys), with the source of
// the key as its Credential. An unknown key is a 401 invalid_api_key, and
// so is a disabled or expired one (at time.Now), returned with the
// key's principal. A KeyStore that fails is an outage (a 503, whose cause
// is logged with the secret redacted). A key without a RateLimit of its
// own gets the middleware's default; one whose RateLimit has Requests ≤ 0
// is not rate-limited. APIKeys panics if keys is nil.
func APIKeys(keys KeyStore) Authenticator {
	if keys == nil {
		panic("auth: APIKeys: nil KeyStore")
	}
	return &keyAuthenticator{keys: keys}
}

// Identities returns the [Authenticator] of an embedder's own identity,
// charged like an API key: identify names, from the request (its session
// cookie, the subject of its JWT, the header of an authenticating proxy),
// the id of a key of keys, which is looked up by id ([IDLookup]), and the
// request is authenticated as that key. Whatever an API key gets, it gets
// the same way: its quota is reserved and settled, its budget in money,
// allowed models, rate limit (under its key id), expiry and disabled flag
// apply, its usage rows carry its key id (readable from the admin API),
// what it stores is scoped by its Owner ([AccountOwner]: set Owner to the
// user's own id unless users of one account are to share what they store),
// and the refusals are the same 401, 403 and 429, in the same shapes.
//
// The key is usually stored without a secret ([KeyPutter.PutKey] with an
// empty secret), so that only identify can name it. Its Credential is
// [CredentialIdentity].
//
// identify returns ("", nil) when the request carries no identity of its
// kind (the middleware asks the next authenticator), an id to look up,
// or an error to refuse the request, with the meaning it has for
// [Authenticator] (an *apierrors.Error is sent as it is, any other
// error is an outage). An id that no key has is a 401 invalid_api_key,
// as is a disabled or expired key (at time.Now). identify must be safe
// for concurrent use, and must not read the request's body.
//
// Identities panics if keys or identify is nil, or if keys cannot look
// keys up by id: keys must be an IDLookup, and so must the store that it
// wraps if it is a [CachedKeyStore] (or any store with an Unwrap()
// KeyStore method).
func Identities(keys KeyStore, identify func(r *http.Request) (keyID string, err error)) Authenticator {
	switch {
	case keys == nil:
		panic("auth: Identities: nil KeyStore")
	case identify == nil:
		panic("auth: Identities: nil identify function")
	case !looksUpIDs(keys):
		panic(fmt.Sprintf("auth: Identities: the KeyStore (%T) cannot look keys up by id: it is no auth.IDLookup", keys))
	}
	return &keyAuthenticator{keys: keys, ids: keys.(IDLookup), identify: identify}
}

// looksUpIDs reports whether keys is an IDLookup, down to the store that
// it wraps, if any.
func looksUpIDs(keys KeyStore) bool {
	for {
		if _, ok := keys.(IDLookup); !ok {
			return false
		}
		w, ok := keys.(interface{ Unwrap() KeyStore })
		if !ok {
			return true
		}
		keys = w.Unwrap()
	}
}

// keyAuthenticator is the Authenticator of [APIKeys] (identify nil) and
// of [Identities]. The middleware calls its methods directly rather than
// Authenticate, so that a request costs it one allocation, as a wrapped
// keyAuthenticator would not; the outcome is the same.
type keyAuthenticator struct {
	keys     KeyStore
	ids      IDLookup                            // Identities only
	identify func(*http.Request) (string, error) // Identities only
}

// Authenticate implements [Authenticator].
func (a *keyAuthenticator) Authenticate(r *http.Request) (*Principal, error) {
	k, kind, err := a.find(r)
	if k == nil || err != nil {
		return nil, err
	}
	p := a.principal(k, kind)
	return &p, a.check(k)
}

// find returns the key that r names and the kind of its credential; a
// nil key and no error when r carries no credential of a's kind.
func (a *keyAuthenticator) find(r *http.Request) (*Key, CredentialKind, error) {
	ctx := r.Context()
	if a.identify != nil {
		id, err := a.identify(r)
		switch {
		case err != nil && !apierrors.Has(err):
			return nil, 0, fmt.Errorf("auth: Identities: identifying the request: %w", err)
		case err != nil || id == "":
			return nil, 0, err
		}
		k, err := a.ids.LookupID(ctx, id)
		switch {
		case errors.Is(err, ErrKeyNotFound):
			return nil, 0, apierrors.InvalidAPIKey(msgUnknownIdentity).WithCause(fmt.Errorf("key id %q: %w", id, ErrKeyNotFound))
		case err != nil:
			return nil, 0, dependencyError(ctx, fmt.Errorf("auth: IDLookup.LookupID: %w", err))
		case k == nil:
			return nil, 0, apierrors.Internal(errors.New("auth: IDLookup.LookupID returned a nil key and no error"))
		}
		return k, CredentialIdentity, nil
	}
	cred, err := ParseCredential(r)
	switch {
	case errors.Is(err, ErrMissingCredentials):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}
	k, err := a.keys.Lookup(ctx, cred.Secret)
	switch {
	case errors.Is(err, ErrKeyNotFound):
		return nil, 0, apierrors.InvalidAPIKey(msgUnknownKey).WithCause(ErrKeyNotFound)
	case err != nil:
		return nil, 0, dependencyError(ctx, fmt.Errorf("auth: KeyStore.Lookup: %w", redacted{err: err, secret: cred.Secret}))
	case k == nil:
		return nil, 0, apierrors.Internal(errors.New("auth: KeyStore.Lookup returned a nil key and no error"))
	}
	return k, cred.Kind, nil
}

// check refuses k if it is disabled or expired.
func (a *keyAuthenticator) check(k *Key) error {
	var msg string
	var cause error
	switch {
	case k.Disabled:
		msg, cause = msgDisabled, ErrKeyDisabled
		if a.identify != nil {
			msg = msgDisabledIdentity
		}
	case k.Expired(time.Now()):
		msg, cause = msgExpired, ErrKeyExpired
		if a.identify != nil {
			msg = msgExpiredIdentity
		}
	default:
		return nil
	}
	return apierrors.InvalidAPIKey(msg).WithCause(fmt.Errorf("key id %q: %w", k.ID, cause))
}

// principal returns the principal of k, charged to a's store.
func (a *keyAuthenticator) principal(k *Key, kind CredentialKind) Principal {
	p := Principal{
		KeyID:         k.ID,
		Owner:         k.Owner,
		AllowedModels: k.AllowedModels,
		Credential:    kind,
		Quota:         k.Quota,
		Keys:          a.keys,
	}
	switch {
	case k.RateLimit == nil: // the default
	case k.RateLimit.Unlimited():
		p.RateLimit = Limit{Requests: -1}
	default:
		p.RateLimit = *k.RateLimit
	}
	return p
}

// refusal is the error to send for err, an authenticator's refusal of
// the request of ctx (see [Authenticator]).
func refusal(ctx context.Context, err error) error {
	switch {
	case apierrors.Has(err):
		return err
	case errors.Is(err, ErrKeyNotFound):
		return apierrors.InvalidAPIKey(msgUnknownKey).WithCause(err)
	case errors.Is(err, ErrKeyDisabled):
		return apierrors.InvalidAPIKey(msgDisabled).WithCause(err)
	case errors.Is(err, ErrKeyExpired):
		return apierrors.InvalidAPIKey(msgExpired).WithCause(err)
	}
	return dependencyError(ctx, err)
}

// A SessionAuthenticator accepts an admin-console session in place of an
// API key, as the video content endpoint does (spec §4.7, §5.3). It must
// be safe for concurrent use. [WithSessionAuthenticator] makes it the
// last [Authenticator] of a middleware.
//
// AuthenticateSession returns (nil, nil) when r carries no session; the
// middleware then answers 401 missing_authorization. It returns an
// *apierrors.Error, rendered as is, to refuse a session (for example
// apierrors.InvalidAPIKey("The session has expired.")); any other error
// is taken for the outage of what keeps sessions: a 503
// service_unavailable with Retry-After, whose text is only logged. The
// returned principal is copied and its Credential set to
// [CredentialSession]; then it is treated as any authenticator's: its
// quota is enforced and its usage charged only if it names a store
// (Principal.Keys), which a console session does not, and its RateLimit
// (if Requests > 0; the default if 0) applies under the limiter key
// "session:" + KeyID.
type SessionAuthenticator interface {
	AuthenticateSession(r *http.Request) (*Principal, error)
}

// SessionAuthenticatorFunc adapts a function to [SessionAuthenticator].
type SessionAuthenticatorFunc func(r *http.Request) (*Principal, error)

// AuthenticateSession calls f(r).
func (f SessionAuthenticatorFunc) AuthenticateSession(r *http.Request) (*Principal, error) {
	return f(r)
}

// sessions is the Authenticator of a SessionAuthenticator.
type sessions struct{ sa SessionAuthenticator }

func (s sessions) Authenticate(r *http.Request) (*Principal, error) {
	sp, err := s.sa.AuthenticateSession(r)
	if err != nil {
		if !apierrors.Has(err) {
			err = fmt.Errorf("auth: SessionAuthenticator: %w", err)
		}
		return nil, err
	}
	if sp == nil {
		return nil, nil
	}
	p := *sp
	p.Credential = CredentialSession
	return &p, nil
}
