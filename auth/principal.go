package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
)

// ErrNoPrincipal is returned by [Charge] when the context carries no
// principal: the handler is not behind [Middleware].
var ErrNoPrincipal = errors.New("auth: no principal in context")

// Principal is the authenticated caller of a request, as handlers see it.
// The middleware puts it in the request context ([PrincipalFrom]). Treat
// it as read-only: it is shared by everything that handles the request.
type Principal struct {
	// KeyID is the id of the API key, or the session's subject for
	// [CredentialSession]. Handlers use it to scope resources (tasks,
	// stored responses) and in logs.
	KeyID string
	// Owner is the account the key belongs to.
	Owner string
	// AllowedModels lists the models the key may use; empty means all.
	// See [Principal.AllowsModel].
	AllowedModels []string
	// RateLimit is the request rate limit applied to this request (the
	// key's own, or the default); Requests ≤ 0 means none.
	RateLimit Limit
	// Credential is where the credential came from.
	Credential CredentialKind
	// Quota is a snapshot of the key's budget when the request was
	// authenticated. [Charge] returns the budget after charging; the
	// snapshot is not updated.
	Quota Quota
}

// AllowsModel reports whether p may use model: true if AllowedModels is
// empty or contains model exactly.
func (p *Principal) AllowsModel(model string) bool {
	return len(p.AllowedModels) == 0 || slices.Contains(p.AllowedModels, model)
}

type ctxKey struct{}

// principalCtx is the context that carries a principal: one value that
// answers [ctxKey] with itself. keys is the store to charge, nil for
// principals without one. The middleware's principal lives in own, so
// that a request costs one allocation for the principal and its context.
type principalCtx struct {
	context.Context
	p    *Principal
	keys KeyStore
	own  Principal
}

func (c *principalCtx) Value(key any) any {
	if key == (ctxKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *principalCtx) String() string { return "auth principal context" }

// WithPrincipal returns a copy of ctx carrying p, for tests and for custom
// authentication in front of handlers. [Charge], [Reserve] and [Settle]
// on the result record nothing (there is no store to charge).
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return &principalCtx{Context: ctx, p: p}
}

// PrincipalFrom returns the principal that [Middleware] (or
// [WithPrincipal]) put in ctx.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	c, ok := ctx.Value(ctxKey{}).(*principalCtx)
	if !ok || c.p == nil {
		return nil, false
	}
	return c.p, true
}

// withCharging returns a copy of ctx carrying p, charged to keys.
func withCharging(ctx context.Context, p Principal, keys KeyStore) *principalCtx {
	c := &principalCtx{Context: ctx, keys: keys, own: p}
	c.p = &c.own
	return c
}

// Charge records amount units of usage (tokens by default; see [Quota])
// against the API key that authenticated the request of ctx, through the
// [KeyStore] given to [Middleware], and returns the key's budget
// afterwards, with nothing reserved ([KeyStore.Settle] with Reserved 0).
// Handlers that reserve an estimate first use [Reserve] and
// [Reservation.Settle] instead; Charge is for work charged after the
// fact, with the usage reported to the client (for example
// usage.total_tokens). Concurrent requests that are only charged after
// the fact are not held to the budget: each is admitted on the snapshot
// the middleware checked (see "The bound" in the package documentation).
//
//	if _, err := auth.Charge(r.Context(), int64(usage.TotalTokens)); err != nil &&
//		!errors.Is(err, auth.ErrQuotaExceeded) {
//		logger.LogAttrs(ctx, slog.LevelError, "charging usage", slog.Any("error", err))
//	}
//
// Charge ignores ctx's cancellation and deadline (keeping its values), so
// that work done for a client that has already gone is charged all the
// same; a KeyStore that may block should bound its own calls.
//
// An error wrapping [ErrQuotaExceeded] means the budget did not cover
// amount: it is now zero and the key's next request gets 403. The work
// was done, so handlers usually log this rather than fail the reply.
// Charge returns [ErrNoPrincipal] when ctx has no principal and an error
// for a negative amount. For a principal without a store (a session, or
// one set with [WithPrincipal]) it records nothing and returns p.Quota.
//
// Charge is safe for concurrent use.
func Charge(ctx context.Context, amount int64) (Quota, error) {
	v, ok := ctx.Value(ctxKey{}).(*principalCtx)
	if !ok || v.p == nil {
		return Quota{}, ErrNoPrincipal
	}
	if amount < 0 {
		return v.p.Quota, fmt.Errorf("auth: Charge: negative amount %d", amount)
	}
	if v.keys == nil {
		return v.p.Quota, nil
	}
	return v.keys.Settle(context.WithoutCancel(ctx), SettleParams{KeyID: v.p.KeyID, Used: amount})
}

// Settle settles p ([KeyStore.Settle]) through the KeyStore of the
// request of ctx, the one given to [Middleware], for quota that one
// request reserved and another settles: that of a video task deleted
// before it finished, say. p.KeyID need not be the request's own key.
// Settle ignores ctx's cancellation, returns [ErrNoPrincipal] when ctx
// has no principal, and records nothing for a principal without a store.
func Settle(ctx context.Context, p SettleParams) (Quota, error) {
	v, ok := ctx.Value(ctxKey{}).(*principalCtx)
	if !ok || v.p == nil {
		return Quota{}, ErrNoPrincipal
	}
	if v.keys == nil {
		return v.p.Quota, nil
	}
	return v.keys.Settle(context.WithoutCancel(ctx), p)
}

// A Reservation is quota that [Reserve] set aside for one request in
// flight. Settle it exactly once, when the request ends, with what the
// request really cost. It is safe for concurrent use; the zero value
// reserves nothing.
type Reservation struct {
	keys    KeyStore
	keyID   string
	amount  int64
	settled atomic.Bool
}

// Reserve sets aside amount units of the budget of the API key that
// authenticated the request of ctx ([KeyStore.Reserve]), before the
// request does its work, so that concurrent requests cannot all spend the
// same budget. The whole amount is reserved as long as any of the budget
// is unreserved; when all of it is, Reserve returns an error wrapping
// [ErrQuotaExceeded], which handlers answer with 403 insufficient_quota.
//
//	res, err := auth.Reserve(r.Context(), estimate)
//	if err != nil { … } // 403 for ErrQuotaExceeded
//	… // do the work
//	res.Settle(r.Context(), int64(usage.TotalTokens))
//
// Like [Charge], Reserve ignores ctx's cancellation, returns
// [ErrNoPrincipal] when ctx has no principal and an error for a negative
// amount, and reserves nothing (returning a Reservation whose Settle
// records nothing) for a principal without a store.
func Reserve(ctx context.Context, amount int64) (*Reservation, error) {
	v, ok := ctx.Value(ctxKey{}).(*principalCtx)
	if !ok || v.p == nil {
		return nil, ErrNoPrincipal
	}
	if amount < 0 {
		return nil, fmt.Errorf("auth: Reserve: negative amount %d", amount)
	}
	if v.keys == nil {
		return &Reservation{keyID: v.p.KeyID}, nil
	}
	if err := v.keys.Reserve(context.WithoutCancel(ctx), v.p.KeyID, amount); err != nil {
		return nil, err
	}
	return &Reservation{keys: v.keys, keyID: v.p.KeyID, amount: amount}, nil
}

// KeyID returns the id of the key that r is reserved on.
func (r *Reservation) KeyID() string { return r.keyID }

// Amount returns the amount reserved: 0 when nothing was (a principal
// without a store), and after Settle.
func (r *Reservation) Amount() int64 {
	if r.keys == nil || r.settled.Load() {
		return 0
	}
	return r.amount
}

// Settle releases the reservation and records used units of usage against
// the key, in one step ([KeyStore.Settle]), and returns the key's budget
// afterwards. used may be more or less than the amount reserved. An error
// wrapping [ErrQuotaExceeded] means the budget did not cover used: it is
// now zero (the work was done, so handlers log this rather than fail).
// Settle ignores ctx's cancellation, so that work done for a client that
// has gone is charged. Only the first call settles: later ones return an
// error and record nothing. On a reservation without a store it records
// nothing.
//
// Whatever the settlement returns, the reservation is released: a
// negative used is an error that records no usage but releases it, and a
// settlement that the KeyStore fails (other than with ErrQuotaExceeded or
// ErrKeyNotFound) is followed by one that only releases it, so that a
// request whose usage could not be recorded never holds its key's budget
// until a restart.
func (r *Reservation) Settle(ctx context.Context, used int64) (Quota, error) {
	return r.SettleUsage(ctx, SettleParams{Used: used})
}

// SettleUsage is [Reservation.Settle] with the usage described: p.Used is
// the amount used, and p.Model, p.InputTokens, p.OutputTokens and
// p.CostUSD describe it for the key's cost and its usage row
// ([SettleParams]); p.KeyID and p.Reserved are ignored (the
// reservation's own are settled). Like Settle, only the first call of
// either settles, and it always releases the reservation. Negative
// token counts and a cost that is negative or not a number are recorded
// as 0.
func (r *Reservation) SettleUsage(ctx context.Context, p SettleParams) (Quota, error) {
	if !r.settled.CompareAndSwap(false, true) {
		return Quota{}, errors.New("auth: Reservation.Settle: already settled")
	}
	var bad error
	if p.Used < 0 {
		bad = fmt.Errorf("auth: Reservation.Settle: negative amount %d", p.Used)
		p = SettleParams{} // release only
	}
	if r.keys == nil {
		return Quota{}, bad
	}
	ctx = context.WithoutCancel(ctx)
	p.KeyID, p.Reserved = r.keyID, r.amount
	p.InputTokens, p.OutputTokens, p.CostUSD = max(p.InputTokens, 0), max(p.OutputTokens, 0), CleanCost(p.CostUSD)
	q, err := r.keys.Settle(ctx, p)
	if err != nil && r.amount > 0 && !errors.Is(err, ErrQuotaExceeded) && !errors.Is(err, ErrKeyNotFound) {
		if _, rerr := r.keys.Settle(ctx, SettleParams{KeyID: r.keyID, Reserved: r.amount}); rerr != nil {
			err = errors.Join(err, fmt.Errorf("auth: releasing the reservation: %w", rerr))
		}
	}
	if bad != nil {
		return q, errors.Join(bad, err)
	}
	return q, err
}

// A SessionAuthenticator accepts an admin-console session in place of an
// API key, as the video content endpoint does (spec §4.7, §5.3). It must
// be safe for concurrent use.
//
// AuthenticateSession returns (nil, nil) when r carries no session; the
// middleware then answers 401 missing_authorization. It returns an
// *apierrors.Error, rendered as is, to refuse a session (for example
// apierrors.InvalidAPIKey("The session has expired.")); any other error
// is taken for the outage of what keeps sessions: a 503
// service_unavailable with Retry-After, whose text is only logged. The returned principal is
// copied and its Credential set to [CredentialSession]. Its Quota is not
// enforced, and its RateLimit, if Requests > 0, replaces the default
// limit, which otherwise applies under the limiter key "session:" +
// KeyID.
type SessionAuthenticator interface {
	AuthenticateSession(r *http.Request) (*Principal, error)
}

// SessionAuthenticatorFunc adapts a function to [SessionAuthenticator].
type SessionAuthenticatorFunc func(r *http.Request) (*Principal, error)

// AuthenticateSession calls f(r).
func (f SessionAuthenticatorFunc) AuthenticateSession(r *http.Request) (*Principal, error) {
	return f(r)
}
