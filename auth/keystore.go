package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"math"
	"slices"
	"time"
)

// Errors that are part of the contracts of this package. Compare with
// errors.Is: implementations may wrap them.
var (
	// ErrKeyNotFound is returned by [KeyStore.Lookup] for a secret that
	// belongs to no key, and by [KeyStore.Reserve] and [KeyStore.Settle]
	// for an unknown key id.
	ErrKeyNotFound = errors.New("auth: key not found")
	// ErrQuotaExceeded is returned by [KeyStore.Reserve] when all of a
	// limited budget is reserved, and by [KeyStore.Settle] when a limited
	// budget held less than the amount used (the budget is then zero).
	ErrQuotaExceeded = errors.New("auth: quota exceeded")
	// ErrKeyDisabled is the cause of the 401 sent for a disabled key.
	ErrKeyDisabled = errors.New("auth: key disabled")
	// ErrKeyExpired is the cause of the 401 sent for an expired key.
	ErrKeyExpired = errors.New("auth: key expired")
	// ErrDuplicateKey is returned by [MemoryKeyStore.Add] for a key whose
	// id or secret is already stored.
	ErrDuplicateKey = errors.New("auth: duplicate key")
)

// A KeyStore holds API keys and their quotas. Implementations must be
// safe for concurrent use, and should store only a hash of each secret
// ([HashSecret]); they must never log secrets.
//
// Quota moves in two steps. When a request is admitted, the handler
// reserves an estimate of its cost (Reserve); when the request ends, it
// settles: the reservation is released and the real usage consumed, in
// one atomic step (Settle). Work that is charged after the fact, with
// nothing reserved, is a Settle with Reserved 0 (what [Charge] does).
// Each method is one atomic read-modify-write of one key's quota, so a
// SQL store implements it with one statement, for example:
//
//	-- Reserve($1 id, $2 amount): no row updated means unknown or refused
//	-- (a second SELECT, on that path only, tells which).
//	UPDATE keys SET reserved = CASE WHEN unlimited THEN 0 ELSE reserved + $2 END
//	WHERE id = $1 AND (unlimited OR remaining > reserved)
//
//	-- Settle($1 id, $2 reserved, $3 used), returning the new quota and
//	-- whether the budget covered $3 (old.remaining >= $3).
//	UPDATE keys SET reserved = GREATEST(reserved - $2, 0),
//	       used = used + LEAST($3, max_int64 - used),
//	       remaining = CASE WHEN unlimited THEN 0 ELSE GREATEST(remaining - $3, 0) END
//	WHERE id = $1 RETURNING …
//
// The conformance suite authtest.TestKeyStore checks this contract.
type KeyStore interface {
	// Lookup returns the key whose secret is secret, or an error wrapping
	// ErrKeyNotFound. It returns disabled and expired keys as they are:
	// the caller decides what to do with them. It must not find a key by
	// anything but its exact secret (not by its id, nor by its hash). The
	// returned Key is the caller's to modify.
	Lookup(ctx context.Context, secret string) (*Key, error)

	// Reserve promises amount (≥ 0, in the quota's unit) of the budget of
	// the key with id keyID to one request in flight, by adding it to
	// Quota.Reserved. It grants the whole amount or nothing: a limited
	// key is granted the whole amount as long as any of its budget is
	// unreserved (Remaining > Reserved), even if amount is more than
	// that, and is refused with an error wrapping ErrQuotaExceeded,
	// changing nothing, when all of it is reserved (Remaining ≤
	// Reserved). An unlimited key is always granted, and Reserve records
	// nothing for it. A key over its budget in money
	// ([Quota.OverBudget]), limited or not, is refused with an error
	// wrapping ErrQuotaExceeded, changing nothing. Reserve does not check Disabled or ExpiresAt (the
	// middleware does). Concurrent calls must lose no update. An unknown
	// keyID returns an error wrapping ErrKeyNotFound.
	Reserve(ctx context.Context, keyID string, amount int64) error

	// Settle ends a reservation and records the usage of its request, in
	// one atomic step, and returns the key's quota afterwards:
	//
	//   - it takes p.Reserved from Quota.Reserved, leaving at least 0
	//     (an unlimited key's Reserved stays 0);
	//   - it adds p.Used to Quota.Used (saturating at math.MaxInt64),
	//     and on a limited key takes p.Used from Quota.Remaining. If
	//     Remaining held less than p.Used, Settle takes what is left,
	//     sets Remaining to 0 and returns the new quota with an error
	//     wrapping ErrQuotaExceeded: the overdraft is reported, never
	//     stored as a negative budget. Using exactly what is left
	//     succeeds and leaves 0. An unlimited key never returns
	//     ErrQuotaExceeded.
	//   - it adds p.CostUSD to Quota.CostUSD (never an error: a cost past
	//     BudgetUSD is recorded, and the key's next request refused), as
	//     [AddCost] does: a cost that is negative or not a number counts
	//     as 0, and the sum saturates at math.MaxFloat64; and,
	//     if p.Model is set and the store is a [UsageReader], records the
	//     usage row of p in the same atomic step.
	//
	// Settle does not check Disabled or ExpiresAt: work already done is
	// charged. Concurrent calls must lose no update. An unknown p.KeyID
	// returns an error wrapping ErrKeyNotFound. Negative amounts are an
	// error and change nothing.
	Settle(ctx context.Context, p SettleParams) (Quota, error)
}

// A KeyPutter is a [KeyStore] whose keys can be written from outside, as
// a gateway does with the keys of its configuration file at start. It is
// an optional capability: the middleware needs only KeyStore.
//
// The conformance suite authtest.TestKeyPutter checks this contract.
type KeyPutter interface {
	// PutKey stores k under secret (only its hash, [HashSecret]), or, if
	// a key with k.ID is stored, updates that key: every field of k but
	// its usage. k.Quota.Remaining is the key's whole budget and
	// k.Quota.Used, Reserved and CostUSD are ignored: the stored key keeps its
	// Used, Reserved and CostUSD (0 for a new key), k.Quota.BudgetUSD is
	// stored as it is, and its Remaining becomes the
	// budget less Used, never below 0, so that putting a key again never
	// refunds what it spent. The budget is stored as the key's Granted
	// (0 for an unlimited key); k.Granted is ignored. A new secret for a stored id replaces the
	// old one, which stops working. A new key's CreatedAt is k.CreatedAt,
	// or the store's clock if that is zero; an update keeps the stored
	// one.
	//
	// An empty secret stores k without one: no secret finds it
	// (Lookup never returns it), only its id does ([IDLookup],
	// [KeyAdmin]), as [Identities] does for an embedder's own users.
	// Putting a stored key with an empty secret removes its secret, which
	// stops working. Keys without a secret are charged, limited, listed
	// and deleted like the others.
	//
	// PutKey returns an error wrapping
	// [ErrDuplicateKey] when secret is stored under another id, and an
	// error (that does not contain the secret) for a malformed secret
	// ([ValidSecret]) or an empty id. It is safe for concurrent use with
	// the KeyStore's methods, and loses none of their updates.
	PutKey(ctx context.Context, secret string, k Key) error
}

// An IDLookup is a [KeyStore] that finds a key by its id as well as by its
// secret: what [Identities] needs to authenticate an embedder's own
// identity as a key (usually one stored without a secret: see
// [KeyPutter]). It is an optional capability. Implementations must be
// safe for concurrent use.
//
// The conformance suite authtest.TestIDLookup checks this contract.
type IDLookup interface {
	// LookupID returns the key with id id, whether it has a secret or
	// not, or an error wrapping ErrKeyNotFound. Like Lookup, it returns
	// disabled and expired keys as they are, and may answer from a cache
	// with a documented staleness bound ([CachedKeyStore]); unlike
	// [KeyAdmin.GetKey], which an admin API reads, it serves
	// authentication. The returned Key is the caller's to modify.
	LookupID(ctx context.Context, id string) (*Key, error)
}

// Budget returns the quota that [KeyPutter.PutKey] stores for a key whose
// whole budget is budget (unlimited for UnlimitedQuota), when the key
// has used used and has reserved reserved so far.
//
// The result carries budget.BudgetUSD and no CostUSD: a store sets
// CostUSD to the cost it has recorded for the key.
func Budget(budget Quota, used, reserved int64) Quota {
	q := Quota{Unlimited: budget.Unlimited, Used: max(used, 0), BudgetUSD: max(budget.BudgetUSD, 0)}
	if !q.Unlimited {
		q.Remaining = max(budget.Remaining-q.Used, 0)
		q.Reserved = max(reserved, 0)
	}
	return q
}

// grantedBy is the Granted that [KeyPutter.PutKey] stores for a key whose
// whole budget is budget.
func grantedBy(budget Quota) int64 {
	if budget.Unlimited {
		return 0
	}
	return max(budget.Remaining, 0)
}

// SettleParams are the parameters of [KeyStore.Settle].
type SettleParams struct {
	// KeyID is the id of the key charged.
	KeyID string
	// Reserved is the amount that the request reserved with
	// [KeyStore.Reserve], released now; 0 for usage charged without a
	// reservation.
	Reserved int64
	// Used is the usage consumed: the real cost of the request.
	Used int64

	// Model, InputTokens, OutputTokens and CostUSD describe the usage
	// behind Used, for usage records, budgets in money and metrics: the
	// model that answered, the tokens it read and wrote, and their price
	// in US dollars (0 for a model without pricing). They are zero for a
	// settlement that records nothing (a released reservation).
	//
	// A settlement with a Model is one request's usage: the store adds
	// CostUSD to the key's Quota.CostUSD and, if it is a [UsageReader],
	// records one usage row (key, model, time, tokens, cost) in the same
	// write as the quota. A settlement without a Model records no row.
	//
	// CachedTokens and CacheWriteTokens are the parts of InputTokens read
	// from and written to the provider's prompt cache, ReasoningTokens
	// the part of OutputTokens spent reasoning, as the provider reported
	// them (0 when it did not): the usage row keeps them, so that its cost
	// can be told apart.
	Model            string
	InputTokens      int64
	OutputTokens     int64
	CachedTokens     int64
	CacheWriteTokens int64
	ReasoningTokens  int64
	CostUSD          float64
	// Time is when the usage happened, for the usage row; the zero time
	// means the time of the Settle.
	Time time.Time
}

// Key is an API key as a [KeyStore] holds it. It never carries the
// secret. A key may have no secret at all: then it is the key of an
// embedder's own identity, which [Identities] names by its id.
type Key struct {
	// ID identifies the key in logs, rate limits and usage records. It is
	// not secret and never authenticates a request by itself: [Identities]
	// looks a key up by its id only once the embedder's own
	// authentication has named it.
	ID string
	// Owner is the account the key belongs to.
	Owner string
	// Quota is the key's budget. The zero Quota is a limited budget of
	// zero, which is refused with 403: set it explicitly, to
	// [UnlimitedQuota] or [LimitedQuota].
	Quota Quota
	// Granted is the whole budget that a limited key was given, as last
	// set ([KeyPutter.PutKey]'s budget, or a [KeyAdmin] change), of which
	// Quota.Remaining is what is left: Granted less Quota.Used, never
	// below 0. It says what Quota cannot once the key has used more than
	// it was granted (the request that crosses the budget is served, and
	// a budget may be lowered below the usage): then Remaining is 0 and
	// Used is above Granted. It is 0 for an unlimited key. Only the admin
	// API reads it (see [Key.GrantedQuota]); quota checks read Quota.
	Granted int64
	// ExpiresAt is when the key stops working; the zero time means never.
	ExpiresAt time.Time
	// Disabled keys are refused with 401 invalid_api_key.
	Disabled bool
	// RateLimit is the key's own request rate limit. nil means the
	// middleware's default ([WithDefaultRateLimit]); a Limit with
	// Requests ≤ 0 means the key is not rate-limited.
	RateLimit *Limit
	// AllowedModels lists the models the key may use; empty means all.
	// The middleware does not enforce it (it does not read bodies):
	// handlers check [Principal.AllowsModel].
	AllowedModels []string
	// CreatedAt is when the key was first stored; a store sets it (to
	// its clock) when it is zero.
	CreatedAt time.Time
}

// GrantedQuota returns k.Granted, or, when Granted is below
// Quota.Remaining and so cannot be the key's (a store that does not keep
// it, a key made without it), Remaining plus Used: what a key whose
// budget never changed and was never overdrawn was granted. It is 0 for
// an unlimited key.
func (k *Key) GrantedQuota() int64 {
	switch {
	case k.Quota.Unlimited:
		return 0
	case k.Granted >= k.Quota.Remaining:
		return k.Granted
	}
	if g := k.Quota.Remaining + k.Quota.Used; g >= 0 {
		return g
	}
	return math.MaxInt64 // overflow
}

// Expired reports whether k has expired at now.
func (k *Key) Expired(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt)
}

// Clone returns a deep copy of k.
func (k *Key) Clone() *Key {
	c := *k
	if k.RateLimit != nil {
		l := *k.RateLimit
		c.RateLimit = &l
	}
	c.AllowedModels = slices.Clone(k.AllowedModels)
	return &c
}

// Quota is a key's budget and the usage recorded against it. Amounts are
// integers in a unit that the embedder chooses and that every caller of
// [Charge] must share: tokens (prompt plus completion) by default.
//
// The zero Quota is a limited budget of zero: unlimited must be said
// explicitly with Unlimited, so that a forgotten budget fails closed.
type Quota struct {
	// Unlimited reports that the key has no budget: it never runs out and
	// Remaining is meaningless (reported as 0).
	Unlimited bool
	// Remaining is what is left of a limited budget, reserved or not. It
	// is never negative; a key with Remaining ≤ 0 is refused with 403
	// insufficient_quota.
	Remaining int64
	// Reserved is the part of a limited budget promised to requests in
	// flight ([KeyStore.Reserve]) and not yet settled. It is never
	// negative, and may exceed Remaining: a reservation is granted in
	// full while anything is unreserved. Always 0 for an unlimited key.
	Reserved int64
	// Used is the total usage recorded, including any overdraft that the
	// budget could not cover.
	Used int64

	// BudgetUSD is the key's budget in US dollars, beside the one above:
	// once CostUSD reaches it the key is refused with 403
	// insufficient_quota (by the middleware on its snapshot, and by
	// [KeyStore.Reserve]). 0 means no budget in money. Unlike Remaining
	// it is never consumed: the cost accumulates in CostUSD.
	BudgetUSD float64
	// CostUSD is the cost in US dollars recorded against the key: the sum
	// of the [SettleParams].CostUSD of its settlements. It may pass
	// BudgetUSD (the request that crossed it was already done).
	CostUSD float64
}

// UnlimitedQuota returns a budget that never runs out.
func UnlimitedQuota() Quota { return Quota{Unlimited: true} }

// LimitedQuota returns a budget of remaining units.
func LimitedQuota(remaining int64) Quota { return Quota{Remaining: remaining} }

// Exhausted reports whether q is a limited budget with nothing left. It
// does not look at Reserved: a key whose budget is all reserved is not
// exhausted (its requests in flight may yet release some), but
// [KeyStore.Reserve] refuses it.
//
// It also reports whether the budget in money is spent ([Quota.OverBudget]).
func (q Quota) Exhausted() bool { return (!q.Unlimited && q.Remaining <= 0) || q.OverBudget() }

// OverBudget reports whether q has a budget in money (BudgetUSD > 0) and
// its recorded cost has reached it.
func (q Quota) OverBudget() bool { return q.BudgetUSD > 0 && q.CostUSD >= q.BudgetUSD }

// Available returns the part of a limited budget that is not reserved,
// Remaining − Reserved, or 0 if that is negative; 0 for an unlimited
// budget (which has no such bound). A limited key can reserve only while
// Available is positive.
func (q Quota) Available() int64 {
	if q.Unlimited || q.Reserved >= q.Remaining {
		return 0
	}
	return q.Remaining - q.Reserved
}

// reserve applies a reservation of amount to q following the rules of
// [KeyStore.Reserve] and reports whether it was granted.
func (q Quota) reserve(amount int64) (next Quota, granted bool) {
	if q.OverBudget() {
		return q, false
	}
	if q.Unlimited {
		return q, true
	}
	if q.Remaining <= q.Reserved {
		return q, false
	}
	q.Reserved = addSat(q.Reserved, amount)
	return q, true
}

// settle applies p to q following the rules of [KeyStore.Settle] and
// reports whether the budget covered p.Used.
func (q Quota) settle(p SettleParams) (next Quota, covered bool) {
	q.Reserved = max(q.Reserved-p.Reserved, 0)
	q.CostUSD = AddCost(q.CostUSD, p.CostUSD)
	return q.take(p.Used)
}

// CleanCost returns c as a cost in US dollars is recorded: 0 for a
// negative c or one that is not a number, and at most math.MaxFloat64
// (+Inf saturates). The stores add costs with [AddCost].
func CleanCost(c float64) float64 {
	if !(c > 0) {
		return 0
	}
	return min(c, math.MaxFloat64)
}

// AddCost returns the sum of the costs a and b, each cleaned by
// [CleanCost], saturating at math.MaxFloat64: a key's CostUSD and the
// usage rows' sums are never negative, NaN or infinite.
func AddCost(a, b float64) float64 {
	return min(CleanCost(a)+CleanCost(b), math.MaxFloat64)
}

// addSat returns a + b, both ≥ 0, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// take applies the consumption of amount to q and reports whether the
// budget covered it.
func (q Quota) take(amount int64) (next Quota, covered bool) {
	q.Used = addSat(q.Used, amount)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
		return q, true
	}
	if amount > q.Remaining {
		q.Remaining = 0
		return q, amount == 0
	}
	q.Remaining -= amount
	return q, true
}

// HashSecret returns the hex SHA-256 of secret, the form in which a
// [KeyStore] should keep it. API keys are high-entropy random strings, so
// a fast unsalted hash is enough to make a leaked table useless.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// secretBytes is the randomness of a secret minted by NewSecret.
const secretBytes = 32

// NewSecret mints a new API key: [KeyPrefix] followed by 256 random bits
// from crypto/rand in unpadded URL-safe base64 (46 characters in all).
func NewSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return KeyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}
