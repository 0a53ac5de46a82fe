package auth

import "context"

// An OwnerFunc returns the owner that scopes what a request stores and
// reads back — the stored responses of package responses, the
// conversations of package conversations, the video tasks of package
// videos: a stored thing is visible only to requests with the owner of
// the request that created it. ok false refuses the request: the handler
// answers 401 missing_authorization. The handlers of these packages take
// one with their WithOwner option; the default is [AccountOwner].
type OwnerFunc func(ctx context.Context) (owner string, ok bool)

// AnonymousOwner is the owner that [AccountOwner] and [KeyOwner] give a
// request without a principal (a handler that is not behind
// [Middleware]): such requests share what they store with each other, and
// with no request that has a principal.
const AnonymousOwner = "anonymous"

// AccountOwner is the default [OwnerFunc]: it scopes by account. A request
// belongs to "owner:" + Principal.Owner, so every key of an account (and a
// console session of that account) shares what the account stores; a
// principal without an Owner falls back to [KeyOwner]. A request without
// a principal is [AnonymousOwner].
func AccountOwner(ctx context.Context) (string, bool) {
	p, ok := PrincipalFrom(ctx)
	if ok && p.Owner != "" {
		return "owner:" + p.Owner, true
	}
	return KeyOwner(ctx)
}

// KeyOwner is an [OwnerFunc] that scopes by key: what a key stores is
// visible to that key only ("key:" + KeyID, for an API key as for the key
// of an embedder's identity, [Identities]; "session:" + KeyID for a
// session, so that no key sees it). A request without a principal is
// [AnonymousOwner].
func KeyOwner(ctx context.Context) (string, bool) {
	p, ok := PrincipalFrom(ctx)
	switch {
	case !ok:
		return AnonymousOwner, true
	case p.KeyID == "":
		return "", false
	case p.Credential == CredentialSession:
		return "session:" + p.KeyID, true
	}
	return "key:" + p.KeyID, true
}
