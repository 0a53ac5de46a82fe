package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/gatewaykit/gatewaykit/internal/reqctx"
)

// ErrNoPrincipal is returned by [Charge] when the context carries no
// principal: the handler is not behind [Middleware].
var ErrNoPrincipal = errors.New("auth: no principal in context")

// Principal is the authenticated caller of a request, as handlers see it.
// The middleware puts it in the request context ([PrincipalFrom]). Treat
// it as read-only: it is shared by everything that handles the request.
type Principal struct {
	// KeyID is the id of the key that authenticated the request (an API
	// key, or the key that an embedder's identity names: [Identities]), or
	// the session's subject for [CredentialSession]. Handlers use it to
	// scope resources (tasks, stored responses) and in logs; [Reserve],
	// [Charge] and [Settle] charge it.
	KeyID string
	// Owner is the account the key belongs to.
	Owner string
	// AllowedModels lists the models the key may use; empty means all.
	// See [Principal.AllowsModel].
	AllowedModels []string
	// RateLimit is the request rate limit applied to this request (the
	// key's own, or the default); Requests ≤ 0 means none. In a principal
	// that an [Authenticator] returns, it is the principal's own limit:
	// the zero Limit means the middleware's default
	// ([WithDefaultRateLimit]), and Requests < 0 no limit at all.
	RateLimit Limit
	// Credential is where the credential came from.
	Credential CredentialKind
	// Quota is a snapshot of the key's budget when the request was
	// authenticated. [Charge] returns the budget after charging; the
	// snapshot is not updated.
	Quota Quota
	// Keys is where this principal's usage is charged: the store whose key
	// KeyID [Reserve], [Reservation.Settle], [Charge] and [Settle] reserve
	// on and settle, and whose Quota the middleware checks on the
	// requests that spend. The authenticators of keys ([APIKeys],
	// [Identities]) set it to their store. nil charges nothing: the quota
	// is then neither enforced nor recorded (a console session). It is
	// never encoded as JSON.
	Keys KeyStore `json:"-"`
}

// AllowsModel reports whether p may use model: true if AllowedModels is
// empty or contains model exactly.
func (p *Principal) AllowsModel(model string) bool {
	return len(p.AllowedModels) == 0 || slices.Contains(p.AllowedModels, model)
}

// principalCtx is the context that carries a principal: one value that
// answers reqctx.PrincipalKey with itself. The middleware's principal
// lives in own, so that a request costs one allocation for the principal
// and its context. Behind the kit's metrics or tracing middleware, the
// middleware records it in their reqctx.State instead, where it serves
// only as the principal's holder (its Context is then never asked).
type principalCtx struct {
	context.Context
	p   *Principal
	own Principal
}

func (c *principalCtx) Value(key any) any {
	if key == (reqctx.PrincipalKey{}) {
		return c
	}
	return c.Context.Value(key)
}

func (c *principalCtx) String() string { return "auth principal context" }

// WithPrincipal returns a copy of ctx carrying p, for tests and for custom
// authentication in front of handlers. [Reserve], [Charge] and [Settle] on
// the result charge p.Keys, as they do behind [Middleware]; for a p
// without Keys they record nothing.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return &principalCtx{Context: ctx, p: p}
}

// PrincipalFrom returns the principal that [Middleware] (or
// [WithPrincipal]) put in ctx.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	c, ok := ctx.Value(reqctx.PrincipalKey{}).(*principalCtx)
	if !ok || c.p == nil {
		return nil, false
	}
	return c.p, true
}

// withOwnPrincipal returns a copy of ctx carrying a copy of p.
func withOwnPrincipal(ctx context.Context, p *Principal) *principalCtx {
	c := &principalCtx{Context: ctx, own: *p}
	c.p = &c.own
	return c
}

// principalOf returns the principal of ctx, or ErrNoPrincipal.
func principalOf(ctx context.Context) (*Principal, error) {
	p, ok := PrincipalFrom(ctx)
	if !ok {
		return nil, ErrNoPrincipal
	}
	return p, nil
}

// Charge records amount units of usage (tokens by default; see [Quota])
// against the key that authenticated the request of ctx, in the store
// that its principal is charged to ([Principal].Keys), and returns the key's budget
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
// for a negative amount. For a principal without a store (a console
// session, say) it records nothing and returns p.Quota.
//
// Charge is safe for concurrent use.
func Charge(ctx context.Context, amount int64) (Quota, error) {
	p, err := principalOf(ctx)
	if err != nil {
		return Quota{}, err
	}
	if amount < 0 {
		return p.Quota, fmt.Errorf("auth: Charge: negative amount %d", amount)
	}
	if p.Keys == nil {
		return p.Quota, nil
	}
	return p.Keys.Settle(context.WithoutCancel(ctx), SettleParams{KeyID: p.KeyID, Used: amount})
}

// Settle settles p ([KeyStore.Settle]) in the store that the principal
// of ctx is charged to ([Principal].Keys), for quota that one request
// reserved and another settles: that of a video task deleted before it
// finished, say. p.KeyID need not be the request's own key, but must be
// one of that store's. Settle ignores ctx's cancellation, returns
// [ErrNoPrincipal] when ctx has no principal, and records nothing for a
// principal without a store.
func Settle(ctx context.Context, p SettleParams) (Quota, error) {
	pr, err := principalOf(ctx)
	if err != nil {
		return Quota{}, err
	}
	if pr.Keys == nil {
		return pr.Quota, nil
	}
	return pr.Keys.Settle(context.WithoutCancel(ctx), p)
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

// Reserve sets aside amount units of the budget of the key that
// authenticated the request of ctx, in the store that its principal is
// charged to ([Principal].Keys; [KeyStore.Reserve]), before the
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
	p, err := principalOf(ctx)
	if err != nil {
		return nil, err
	}
	if amount < 0 {
		return nil, fmt.Errorf("auth: Reserve: negative amount %d", amount)
	}
	if p.Keys == nil {
		return &Reservation{keyID: p.KeyID}, nil
	}
	if err := p.Keys.Reserve(context.WithoutCancel(ctx), p.KeyID, amount); err != nil {
		return nil, err
	}
	return &Reservation{keys: p.Keys, keyID: p.KeyID, amount: amount}, nil
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
// the amount used, and p.Model, p.InputTokens, p.OutputTokens (with
// their parts, p.CachedTokens, p.CacheWriteTokens and p.ReasoningTokens,
// each taken at most its whole) and p.CostUSD describe it for the key's
// cost and its usage row
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
	p.CachedTokens = min(max(p.CachedTokens, 0), p.InputTokens)
	p.CacheWriteTokens = min(max(p.CacheWriteTokens, 0), p.InputTokens-p.CachedTokens)
	p.ReasoningTokens = min(max(p.ReasoningTokens, 0), p.OutputTokens)
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
