package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// KeyStore is the [auth.KeyStore] of a [DB]. It keeps the SHA-256 of
// each secret ([auth.HashSecret]), never the secret, and never logs. It
// is safe for concurrent use by any number of gateway processes.
//
// # Quota across replicas
//
// Reserve and Settle are each one statement (a call of a PL/pgSQL
// function installed by the migrations) that locks the key's row, so
// that the reservations and settlements of one key are serialised across
// every replica and none is lost: the bound of package auth ("The
// bound") holds for the whole fleet as for one process.
//
// A reservation is recorded per key and per gateway instance
// ([Options.Instance]), and counts only while that instance's heartbeat
// is fresh. A replica that dies with requests in flight leaves their
// reservations behind; they stop counting [Options.ReservationTTL] after
// its last heartbeat (30 s by default), so a key is never blocked for
// longer than that by a dead replica, and are deleted an hour later.
// Until then the key may be refused with 403 while it has budget left.
// A live replica whose heartbeat cannot reach the database for longer
// than the TTL has its reservations ignored meanwhile: concurrent
// requests may then overspend by at most that replica's reservations.
//
// Calls made at the same moment share a transaction (group commit; see
// groupcommit.go): each is still one statement, applied as if alone, in
// the order the calls were made, without waiting for the disk (a crash
// of the PostgreSQL server may lose the last fraction of a second of
// them).
//
// # Settlements written behind
//
// Reserve waits for its commit. Settle does not, once this KeyStore
// knows the key's quota: the quota that a commit returned for the key
// within the last second (or while calls of the key are queued), with
// the Settles queued since applied. It is answered from it in memory,
// with the quota and the ErrQuotaExceeded that the database will reach
// (on one replica exactly; with several, from the key as of this
// replica's last commit of it), and returns as soon as it is queued; a
// writer goroutine commits the queue behind, in batches. The first
// Settle of a key that this KeyStore does not know waits for its commit
// and returns the database's answer. The queue holds at most 4096
// Settles: when it is full, Settle waits for room (its context bounds
// the wait), so memory stays bounded whatever the database's pace.
//
// What this KeyStore says includes every Settle it has returned: Reserve
// is queued behind them, and Lookup, GetKey, PutKey, UpdateKey and
// DeleteKey wait for the key's to commit, ListKeys, Usage and [KeyStore.Flush]
// for all of them. [DB.Close] commits what is queued (retrying for up to
// 10 s while the database cannot be reached; what it cannot write is
// logged and reported by its error). A crash of the gateway process
// (kill -9) loses the Settles still queued: the batch under way and those
// behind it (the usage of the requests of the last few milliseconds, as
// long as the database keeps up; at most the queue's 4096). A
// queued Settle whose statement fails (PostgreSQL refuses it) is logged
// and dropped; one whose batch could not reach the database is tried
// again, with a back-off (the writer logs it at once, then once a minute
// while it lasts, and once when a batch goes through again), and never
// written twice: a batch whose COMMIT's answer was lost is looked up by
// its transaction id before it is sent again (see "Lost connections" in
// the package documentation). While the queue is full, Reserve refuses
// new requests with [ErrBacklog] rather than admit requests whose
// settlements could not be queued; [KeyStore.PendingUsage] and
// [KeyStore.FailedUsageWrites] report the writer's state, for metrics.
//
// Other replicas see a Settle once it commits. Until then its request's
// reservation is still held in the database and its usage not yet
// consumed, so their view of the key is conservative (Remaining −
// Reserved no larger than it will be) unless the request used more than
// it reserved: that excess is seen one commit later. The bound of package
// auth counts exactly that excess (Σ max(0, U − E)), so it holds across
// the fleet as it does with Settles that wait: N concurrent requests on
// a key with a small quota, spread over replicas, overspend it by less
// than one estimate plus what the admitted requests used beyond their
// own estimates, never more. A Settle's cost in money reaches the key's
// CostUSD, which Reserve checks against a budget in money, when it
// commits: on the other replicas, one commit later.
//
// Reserve answers at once, without asking the database, for a key that
// this KeyStore's Lookup or Settle found unlimited within the last 5
// seconds (an unlimited key's Reserve records nothing): a key that
// another replica makes limited has its reservations counted within 5
// seconds, as the key cache of the middleware sees changes within its
// TTL.
//
// Settle releases the reservation from the settling instance's own
// first, then from other instances' (a video task that another replica
// finished after its first one died).
//
// # Usage and budgets
//
// It is also an [auth.IDLookup] (keys may have no secret: their
// secret_hash is NULL, and only their id finds them, for auth.Identities),
// an [auth.KeyAdmin] and an [auth.UsageReader]. gk_settle
// adds each settlement's cost to the key and inserts its usage row (one
// per request with a model) in the same statement that settles its quota,
// so usage rides the group commit and adds no round trip per request.
// gk_reserve refuses a key whose cost reached its budget in money, and
// Reserve's shortcut for unlimited keys applies only to keys without
// such a budget.
type KeyStore struct {
	db *DB
	// unlimited holds the ids of the keys that Lookup or Settle found
	// unlimited, with the time (Unix ns) until which Reserve trusts it.
	unlimited sync.Map
}

// unlimitedTTL is how long Reserve trusts that a key is unlimited
// without asking the database.
const unlimitedTTL = 5 * time.Second

// note records whether the key id has an unlimited quota.
func (s *KeyStore) note(id string, q auth.Quota) {
	if q.Unlimited && q.BudgetUSD <= 0 { // a budget in money is checked by gk_reserve
		s.unlimited.Store(id, time.Now().Add(unlimitedTTL).UnixNano())
	} else {
		s.unlimited.Delete(id)
	}
}

var (
	_ auth.KeyStore    = (*KeyStore)(nil)
	_ auth.KeyPutter   = (*KeyStore)(nil)
	_ auth.IDLookup    = (*KeyStore)(nil)
	_ auth.KeyAdmin    = (*KeyStore)(nil)
	_ auth.UsageReader = (*KeyStore)(nil)

	_ telemetry.UsageWriter = (*KeyStore)(nil)
)

// keyColumns are the columns that scanKey reads, from gk_keys k.
const keyColumns = `k.id, k.owner, k.unlimited, k.remaining, k.used, k.expires_at, k.disabled,
	k.rate_requests, k.rate_period_ns, k.allowed_models, k.budget_usd, k.cost_usd, k.created_at, k.granted,
	CASE WHEN k.unlimited THEN 0 ELSE (SELECT LEAST(COALESCE(sum(r.amount), 0), 9223372036854775807)::bigint
		FROM gk_reservations r JOIN gk_instances i ON i.id = r.instance
		WHERE r.key_id = k.id AND i.expires_at > clock_timestamp()) END`

func scanKey(row pgx.Row) (*auth.Key, error) {
	var (
		k        auth.Key
		expires  *time.Time
		requests *int32
		period   *int64
	)
	err := row.Scan(&k.ID, &k.Owner, &k.Quota.Unlimited, &k.Quota.Remaining, &k.Quota.Used, &expires, &k.Disabled,
		&requests, &period, &k.AllowedModels, &k.Quota.BudgetUSD, &k.Quota.CostUSD, &k.CreatedAt, &k.Granted, &k.Quota.Reserved)
	if err != nil {
		return nil, err
	}
	if expires != nil {
		k.ExpiresAt = *expires
	}
	if requests != nil {
		k.RateLimit = &auth.Limit{Requests: int(*requests)}
		if period != nil {
			k.RateLimit.Period = time.Duration(*period)
		}
	}
	if len(k.AllowedModels) == 0 {
		k.AllowedModels = nil
	}
	return &k, nil
}

// Lookup implements [auth.KeyStore]. Quota.Reserved is the sum of the
// fresh reservations of every instance. The quota includes every Settle
// of this KeyStore that has returned: if some of the key's are still
// queued, Lookup waits for their commit and reads the key again.
func (s *KeyStore) Lookup(ctx context.Context, secret string) (*auth.Key, error) {
	hash := auth.HashSecret(secret)
	since := s.db.batcher.mark()
	k, err := s.lookup(ctx, hash)
	if err != nil {
		return nil, err
	}
	if op := s.db.batcher.pendingKey(k.ID, since); op != nil {
		// A Settle of the key had not committed when the query began.
		if err := wait(ctx, op); err != nil {
			return nil, fmt.Errorf("postgres: looking up a key: %w", err)
		}
		if k, err = s.lookup(ctx, hash); err != nil {
			return nil, err
		}
	}
	s.note(k.ID, k.Quota)
	return k, nil
}

// LookupID implements [auth.IDLookup]: it is GetKey, which includes every
// Settle of this KeyStore that has returned.
func (s *KeyStore) LookupID(ctx context.Context, id string) (*auth.Key, error) {
	return s.GetKey(ctx, id)
}

// lookup reads the key whose secret hashes to hash (auth.HashSecret).
func (s *KeyStore) lookup(ctx context.Context, hash string) (*auth.Key, error) {
	var k *auth.Key
	err := s.db.retry(ctx, func() (err error) {
		k, err = scanKey(s.db.pool.QueryRow(ctx, s.db.q(`SELECT `+keyColumns+` FROM gk_keys k WHERE k.secret_hash = $1`), hash))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, auth.ErrKeyNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: looking up a key: %w", err)
	}
	return k, nil
}

// ErrBacklog is returned, wrapped, by [KeyStore.Reserve] while the queue
// of Settles to write is full (the database cannot be reached, or does
// not keep up): the request is refused rather than admitted with a
// settlement that could not be queued.
var ErrBacklog = errors.New("postgres: the queue of settlements to write is full")

// Reserve implements [auth.KeyStore]. A negative amount is an error and
// changes nothing. It waits for its commit, behind the Settles of this
// KeyStore queued before it, and so sees them. While the queue of
// Settles is full it fails at once with an error wrapping [ErrBacklog].
func (s *KeyStore) Reserve(ctx context.Context, keyID string, amount int64) error {
	if amount < 0 {
		return fmt.Errorf("postgres: Reserve: negative amount %d", amount)
	}
	if s.db.batcher.full() {
		return fmt.Errorf("postgres: reserving quota of key %q: %w", keyID, ErrBacklog)
	}
	if until, ok := s.unlimited.Load(keyID); ok && time.Now().UnixNano() < until.(int64) {
		return nil
	}
	op, err := s.db.batcher.reserve(keyID, amount)
	if err != nil {
		return fmt.Errorf("postgres: reserving quota of key %q: %w", keyID, err)
	}
	switch op.status {
	case "ok":
		return nil
	case "not_found":
		return fmt.Errorf("postgres: key id %q: %w", keyID, auth.ErrKeyNotFound)
	default:
		return fmt.Errorf("postgres: key id %q: reserving %d, all of the budget reserved: %w", keyID, amount, auth.ErrQuotaExceeded)
	}
}

// Settle implements [auth.KeyStore]. Negative amounts are an error and
// change nothing. It returns once the settlement is queued, with the
// quota computed in memory (see [KeyStore]); the first Settle of a key
// that this KeyStore has not settled within the last second waits for
// its commit and returns the database's answer. ctx bounds only the wait
// for room in a full queue.
func (s *KeyStore) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	if p.Reserved < 0 || p.Used < 0 {
		return auth.Quota{}, fmt.Errorf("postgres: Settle: negative amount (reserved %d, used %d)", p.Reserved, p.Used)
	}
	if p.Model != "" && p.Time.IsZero() {
		p.Time = time.Now()
	}
	p.CostUSD = auth.CleanCost(p.CostUSD)
	q, found, covered, err := s.db.batcher.settle(ctx, p)
	if err != nil {
		return auth.Quota{}, fmt.Errorf("postgres: settling quota of key %q: %w", p.KeyID, err)
	}
	if !found {
		return auth.Quota{}, fmt.Errorf("postgres: key id %q: %w", p.KeyID, auth.ErrKeyNotFound)
	}
	s.note(p.KeyID, q)
	if !covered {
		return q, fmt.Errorf("postgres: key id %q: used %d, more than was left: %w", p.KeyID, p.Used, auth.ErrQuotaExceeded)
	}
	return q, nil
}

// Flush waits until every Settle of this KeyStore that has returned is
// committed, so that every replica sees it, or ctx ends. Close does it
// too. The KeyAdmin and UsageReader methods flush (all keys, or the
// key they read) before they read.
func (s *KeyStore) Flush(ctx context.Context) error {
	if err := s.db.batcher.flush(ctx); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// PendingUsage returns the number of Settles queued or being committed
// (telemetry.UsageWriter): at most the queue's 4096.
func (s *KeyStore) PendingUsage() int { return s.db.batcher.pending() }

// FailedUsageWrites returns the number of group commits that failed
// because the database could not be reached (telemetry.UsageWriter); each
// is tried again.
func (s *KeyStore) FailedUsageWrites() uint64 { return s.db.batcher.failedBatches.Load() }

// Add stores k under secret, which must be a well-formed key
// ([auth.ValidSecret]), or empty for a key without a secret (found by its
// id only: [KeyStore.LookupID]); only its hash is kept. It returns an error
// wrapping [auth.ErrDuplicateKey] if k.ID or the secret is already
// stored, and an error that does not contain the secret for a malformed
// secret or an empty id. k.Quota.Reserved, if positive, is reserved by
// this instance; k.Granted is made [auth.Key.GrantedQuota].
func (s *KeyStore) Add(ctx context.Context, secret string, k auth.Key) error {
	if err := checkKey(secret, k); err != nil {
		return err
	}
	// Not repeatable: run again after a COMMIT whose answer was lost, it
	// would find the key it added and fail.
	k.Granted = k.GrantedQuota()
	err := s.db.tx(ctx, false, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, s.db.q(`INSERT INTO gk_keys (id, secret_hash, owner, unlimited, remaining, used, expires_at, disabled,
			rate_requests, rate_period_ns, allowed_models, budget_usd, created_at, granted, cost_usd)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, COALESCE($13, now()), $14, $15)`),
			append(keyArgs(secret, k), max(k.Quota.CostUSD, 0))...)
		if err != nil {
			return err
		}
		if k.Quota.Reserved > 0 && !k.Quota.Unlimited {
			_, err = tx.Exec(ctx, s.db.q(`INSERT INTO gk_reservations (key_id, instance, amount) VALUES ($1, $2, $3)`),
				k.ID, s.db.instance, k.Quota.Reserved)
		}
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // unique_violation
		return fmt.Errorf("postgres: key %q: id or secret already stored: %w", k.ID, auth.ErrDuplicateKey)
	}
	if err != nil {
		return fmt.Errorf("postgres: adding key %q: %w", k.ID, err)
	}
	return nil
}

// PutKey implements [auth.KeyPutter] in one statement: it inserts k, or
// updates the key with k.ID (its secret hash too, NULL for an empty
// secret), keeping its usage and
// reservations: Remaining becomes k.Quota.Remaining less the usage
// recorded, never below 0, and Granted becomes k.Quota.Remaining.
func (s *KeyStore) PutKey(ctx context.Context, secret string, k auth.Key) error {
	if err := checkKey(secret, k); err != nil {
		return err
	}
	k.Quota = auth.Budget(k.Quota, 0, 0)
	k.Granted = k.Quota.Remaining // the budget; 0 for an unlimited key
	s.unlimited.Delete(k.ID)
	if err := s.db.batcher.waitKey(ctx, k.ID); err != nil {
		return fmt.Errorf("postgres: putting key %q: %w", k.ID, err)
	}
	defer s.db.batcher.invalidate(k.ID)
	err := s.db.retry(ctx, func() error { // the same state however often it runs
		_, err := s.db.pool.Exec(ctx, s.db.q(`INSERT INTO gk_keys AS k (id, secret_hash, owner, unlimited, remaining, used, expires_at, disabled,
			rate_requests, rate_period_ns, allowed_models, budget_usd, created_at, granted)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, COALESCE($13, now()), $14)
			ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash, owner = excluded.owner,
				budget_usd = excluded.budget_usd, granted = excluded.granted,
				unlimited = excluded.unlimited,
				remaining = CASE WHEN excluded.unlimited THEN 0 ELSE GREATEST(excluded.remaining - k.used, 0) END,
				expires_at = excluded.expires_at, disabled = excluded.disabled,
				rate_requests = excluded.rate_requests, rate_period_ns = excluded.rate_period_ns,
				allowed_models = excluded.allowed_models`),
			keyArgs(secret, k)...)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // the secret's hash, under another id
		return fmt.Errorf("postgres: key %q: secret already stored under another id: %w", k.ID, auth.ErrDuplicateKey)
	}
	if err != nil {
		return fmt.Errorf("postgres: putting key %q: %w", k.ID, err)
	}
	return nil
}

// Disable marks the key with id keyID disabled: from then on the
// middleware refuses it with 401. It returns an error wrapping
// [auth.ErrKeyNotFound] for an unknown id.
func (s *KeyStore) Disable(ctx context.Context, keyID string) error {
	var tag pgconn.CommandTag
	err := s.db.retry(ctx, func() (err error) {
		tag, err = s.db.pool.Exec(ctx, s.db.q(`UPDATE gk_keys SET disabled = true WHERE id = $1`), keyID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: disabling key %q: %w", keyID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: key id %q: %w", keyID, auth.ErrKeyNotFound)
	}
	return nil
}

func checkKey(secret string, k auth.Key) error {
	if err := sqlstore.CheckKey(secret, k); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if k.Quota.Used < 0 {
		return fmt.Errorf("postgres: key %q: negative usage %d", k.ID, k.Quota.Used)
	}
	return nil
}

// keyArgs returns the values of the columns of k, in the order of the
// INSERT of Add.
func keyArgs(secret string, k auth.Key) []any {
	var (
		expires  *time.Time
		requests *int32
		period   *int64
	)
	if !k.ExpiresAt.IsZero() {
		expires = &k.ExpiresAt
	}
	if k.RateLimit != nil {
		r, p := int32(min(max(k.RateLimit.Requests, 0), math.MaxInt32)), int64(k.RateLimit.Period)
		requests, period = &r, &p
	}
	remaining := max(k.Quota.Remaining, 0)
	if k.Quota.Unlimited {
		remaining = 0
	}
	models := k.AllowedModels
	if models == nil {
		models = []string{}
	}
	var created *time.Time
	if !k.CreatedAt.IsZero() {
		created = &k.CreatedAt
	}
	granted := max(k.Granted, 0)
	if k.Quota.Unlimited {
		granted = 0
	}
	var hash *string // NULL: no secret
	if secret != "" {
		h := auth.HashSecret(secret)
		hash = &h
	}
	return []any{k.ID, hash, k.Owner, k.Quota.Unlimited, remaining, k.Quota.Used, expires,
		k.Disabled, requests, period, models, max(k.Quota.BudgetUSD, 0), created, granted}
}
