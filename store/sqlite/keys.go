package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// KeyStore is the [auth.KeyStore] of a [DB]. It keeps the SHA-256 of each
// secret ([auth.HashSecret]), never the secret, and never logs. It is safe
// for concurrent use. Every Lookup reads the database: wrap the store in
// [auth.NewCachedKeyStore] to serve lookups from memory.
//
// As a DB serves one process, the quotas that Reserve and Settle change
// are held in memory, which is the authority, and Lookup reports them.
// Reserve changes memory only: reservations last no longer than the
// process (see [Open]). Settle changes memory and returns at once; a
// writer goroutine brings the file up to it in group commits: woken by a
// Settle, it lets the Settles of the next [Options].CommitDelay (1ms)
// gather, then writes the quotas of all their keys in one transaction
// (one row per key, however many Settles). [DB.Close] writes what is
// left, so a clean shutdown loses nothing, and a crash loses at most the
// Settles of the last CommitDelay and the commit under way. (The
// handlers settle after the reply is sent, so no client waits for a
// commit either way.) A commit that fails is tried again, its usage kept
// in memory up to [Options].MaxPendingUsage rows; past that, Reserve
// refuses new requests ([ErrBacklog]). See the package documentation.
// Concurrent calls lose no update. Do not write the keys table from
// elsewhere while the gateway runs.
//
// It is also an [auth.IDLookup] (keys may have no secret: their
// secret_hash is NULL, and only their id finds them, for auth.Identities),
// an [auth.KeyAdmin] and an [auth.UsageReader]. The usage row
// of a Settle with a model, and its cost, ride the same group commit as
// its quota (rows are inserted in the transaction that writes the
// quotas), so recording usage adds no write of its own per request. Usage
// commits what is pending before it reads, and so sees every Settle
// that has returned.
type KeyStore struct{ db *DB }

var (
	_ auth.KeyStore    = (*KeyStore)(nil)
	_ auth.KeyPutter   = (*KeyStore)(nil)
	_ auth.IDLookup    = (*KeyStore)(nil)
	_ auth.KeyAdmin    = (*KeyStore)(nil)
	_ auth.UsageReader = (*KeyStore)(nil)

	_ telemetry.UsageWriter = (*KeyStore)(nil)
)

const keyColumns = `id, owner, unlimited, remaining, reserved, used, expires_at, disabled, rate_requests, rate_period_ns, allowed_models, budget_usd, cost_usd, created_at, granted`

// Add stores k under secret, as it is (its quota included, and its
// Granted made [auth.Key.GrantedQuota]), and returns
// an error wrapping [auth.ErrDuplicateKey] if k.ID or secret is already
// stored. secret must be well-formed ([auth.ValidSecret]), or empty for
// a key without a secret (found by its id only: [KeyStore.LookupID]), and
// k.ID not empty. Use PutKey to upsert keys from a configuration.
func (s *KeyStore) Add(ctx context.Context, secret string, k auth.Key) error {
	if err := sqlstore.CheckKey(secret, k); err != nil {
		return fmt.Errorf("sqlite: KeyStore.Add: %w", err)
	}
	q := k.Quota
	q.Remaining, q.Reserved, q.Used = max(q.Remaining, 0), max(q.Reserved, 0), max(q.Used, 0)
	q.BudgetUSD, q.CostUSD = max(q.BudgetUSD, 0), max(q.CostUSD, 0)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
	}
	k.Quota = q
	k.Granted = k.GrantedQuota()
	if k.CreatedAt.IsZero() {
		k.CreatedAt = time.Now()
	}
	u := &s.db.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if err := checkDuplicate(ctx, tx, secret, k.ID, true); err != nil {
			return fmt.Errorf("sqlite: KeyStore.Add: %w", err)
		}
		return insertKey(ctx, tx, secret, k, q)
	})
	if err == nil {
		u.quotas[k.ID] = &q
	}
	return err
}

// PutKey implements [auth.KeyPutter]: it stores k under secret (none if
// it is empty), or
// updates the stored key with id k.ID. An update replaces every field
// but the usage ([auth.Budget]): the secret (the old one stops working),
// the owner, the limits, and the budget, which k.Quota.Remaining gives
// whole, so the stored Remaining becomes it less the usage already
// recorded (never below 0), and Granted becomes it. Reserved and Used
// are kept. A secret stored
// under another id is an error wrapping [auth.ErrDuplicateKey]. The
// update is one write transaction, so it loses no concurrent Reserve or
// Settle.
func (s *KeyStore) PutKey(ctx context.Context, secret string, k auth.Key) error {
	if err := sqlstore.CheckKey(secret, k); err != nil {
		return fmt.Errorf("sqlite: KeyStore.PutKey: %w", err)
	}
	// The row is written with u.mu held, from the quota in memory; a
	// group commit that took its rows before may write the quota columns
	// after it, so the key is marked dirty and committed once more.
	u := &s.db.usage
	u.mu.Lock()
	var q auth.Quota
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if err := checkDuplicate(ctx, tx, secret, k.ID, false); err != nil {
			return fmt.Errorf("sqlite: KeyStore.PutKey: %w", err)
		}
		var (
			used, reserved, created int64
			cost                    float64
		)
		err := tx.QueryRowContext(ctx, `SELECT used, reserved, cost_usd, created_at FROM keys WHERE id = ?`, k.ID).Scan(&used, &reserved, &cost, &created)
		switch {
		case errNoRows(err):
			if k.CreatedAt.IsZero() {
				k.CreatedAt = time.Now()
			}
		case err != nil:
			return err
		default:
			if m, ok := u.quotas[k.ID]; ok {
				used, reserved, cost = m.Used, m.Reserved, m.CostUSD
			}
			k.CreatedAt = fromNanos(created)
			if _, err := tx.ExecContext(ctx, `DELETE FROM keys WHERE id = ?`, k.ID); err != nil {
				return err
			}
		}
		q = auth.Budget(k.Quota, used, reserved)
		q.CostUSD = cost
		k.Granted = 0
		if !k.Quota.Unlimited {
			k.Granted = max(k.Quota.Remaining, 0) // the budget
		}
		return insertKey(ctx, tx, secret, k, q)
	})
	if err != nil {
		u.mu.Unlock()
		return err
	}
	u.quotas[k.ID] = &q
	// The transaction wrote q; marking it dirty makes the next commit
	// write it again, after any commit already under way that carries an
	// older copy of the key's quota.
	u.dirty[k.ID] = true
	u.mu.Unlock()
	u.wake()
	return nil
}

// secretHash is the secret_hash of secret: NULL for none.
func secretHash(secret string) sql.NullString {
	if secret == "" {
		return sql.NullString{}
	}
	return sql.NullString{String: auth.HashSecret(secret), Valid: true}
}

// checkDuplicate returns an error wrapping auth.ErrDuplicateKey if secret
// is stored under an id other than id, or (with idToo) if id is stored.
func checkDuplicate(ctx context.Context, tx *sql.Tx, secret, id string, idToo bool) error {
	var other string
	if secret != "" {
		err := tx.QueryRowContext(ctx, `SELECT id FROM keys WHERE secret_hash = ?`, auth.HashSecret(secret)).Scan(&other)
		switch {
		case err == nil && (other != id || idToo):
			return fmt.Errorf("key %q: secret already stored: %w", id, auth.ErrDuplicateKey)
		case err != nil && !errNoRows(err):
			return err
		}
	}
	if idToo {
		err := tx.QueryRowContext(ctx, `SELECT id FROM keys WHERE id = ?`, id).Scan(&other)
		switch {
		case err == nil:
			return fmt.Errorf("key id %q: %w", id, auth.ErrDuplicateKey)
		case !errNoRows(err):
			return err
		}
	}
	return nil
}

func insertKey(ctx context.Context, tx *sql.Tx, secret string, k auth.Key, q auth.Quota) error {
	expires, rateN, rateP, m, err := keyFields(&k)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO keys (id, secret_hash, `+keyColumns[len("id, "):]+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, secretHash(secret), k.Owner, q.Unlimited, q.Remaining, q.Reserved, q.Used,
		expires, k.Disabled, rateN, rateP, m, q.BudgetUSD, q.CostUSD, nanos(k.CreatedAt), max(k.Granted, 0))
	return err
}

// fromNanos is the time of Unix nanoseconds n, the zero time for 0.
func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// keyFields returns the values of the columns of k other than its id
// and quota, as insertKey and UpdateKey write them.
func keyFields(k *auth.Key) (expires sql.NullString, rateN, rateP sql.NullInt64, models string, err error) {
	if !k.ExpiresAt.IsZero() {
		expires = sql.NullString{String: k.ExpiresAt.UTC().Format(time.RFC3339Nano), Valid: true}
	}
	if k.RateLimit != nil {
		rateN = sql.NullInt64{Int64: int64(k.RateLimit.Requests), Valid: true}
		rateP = sql.NullInt64{Int64: int64(k.RateLimit.Period), Valid: true}
	}
	list := k.AllowedModels
	if list == nil {
		list = []string{}
	}
	m, err := json.Marshal(list)
	return expires, rateN, rateP, string(m), err
}

// Lookup implements [auth.KeyStore].
func (s *KeyStore) Lookup(ctx context.Context, secret string) (*auth.Key, error) {
	row := s.db.reader.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE secret_hash = ?`, auth.HashSecret(secret))
	k, err := scanKey(row)
	switch {
	case errNoRows(err):
		return nil, auth.ErrKeyNotFound
	case err != nil:
		return nil, fmt.Errorf("sqlite: KeyStore.Lookup: %w", err)
	}
	s.db.usage.current(k)
	return k, nil
}

// LookupID implements [auth.IDLookup]: it is GetKey.
func (s *KeyStore) LookupID(ctx context.Context, id string) (*auth.Key, error) {
	return s.GetKey(ctx, id)
}

// scanKey reads a key of keyColumns.
func scanKey(row interface{ Scan(...any) error }) (*auth.Key, error) {
	var (
		k       auth.Key
		expires sql.NullString
		rateN   sql.NullInt64
		rateP   sql.NullInt64
		models  string
		created int64
	)
	err := row.Scan(&k.ID, &k.Owner, &k.Quota.Unlimited, &k.Quota.Remaining, &k.Quota.Reserved, &k.Quota.Used,
		&expires, &k.Disabled, &rateN, &rateP, &models, &k.Quota.BudgetUSD, &k.Quota.CostUSD, &created, &k.Granted)
	if err != nil {
		return nil, err
	}
	k.CreatedAt = fromNanos(created)
	if expires.Valid {
		if k.ExpiresAt, err = time.Parse(time.RFC3339Nano, expires.String); err != nil {
			return nil, fmt.Errorf("key %q: expires_at: %w", k.ID, err)
		}
	}
	if rateN.Valid {
		k.RateLimit = &auth.Limit{Requests: int(rateN.Int64), Period: time.Duration(rateP.Int64)}
	}
	if err := json.Unmarshal([]byte(models), &k.AllowedModels); err != nil {
		return nil, fmt.Errorf("key %q: allowed_models: %w", k.ID, err)
	}
	return &k, nil
}

// current sets the quota of k to the one in memory, if any: the
// authority, which the file may lag.
func (u *usageState) current(k *auth.Key) {
	u.mu.Lock()
	if q, ok := u.quotas[k.ID]; ok {
		k.Quota = *q
	}
	u.mu.Unlock()
}

// ErrBacklog is returned, wrapped, by [KeyStore.Reserve] while the usage
// rows that wait to be written reach [Options].MaxPendingUsage (the
// database file cannot be written: a full disk): the request is refused
// rather than admitted with a usage that memory could not hold.
var ErrBacklog = errors.New("sqlite: the usage writer is behind: too many usage rows wait to be written")

// Reserve implements [auth.KeyStore]. A negative amount is an error and
// changes nothing. It is made in memory (see [KeyStore]). While the usage
// rows that wait to be written reach [Options].MaxPendingUsage it fails
// with an error wrapping [ErrBacklog].
func (s *KeyStore) Reserve(ctx context.Context, keyID string, amount int64) error {
	if amount < 0 {
		return fmt.Errorf("sqlite: Reserve: negative amount %d", amount)
	}
	u := &s.db.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	if n := len(u.rows) + u.committing; n >= u.max {
		return fmt.Errorf("sqlite: key id %q: %d usage rows wait to be written: %w", keyID, n, ErrBacklog)
	}
	q, err := u.loadLocked(ctx, s.db, keyID)
	if err != nil {
		return err
	}
	switch {
	case q.OverBudget():
		return fmt.Errorf("sqlite: key id %q: cost %g USD reached the budget of %g USD: %w", keyID, q.CostUSD, q.BudgetUSD, auth.ErrQuotaExceeded)
	case q.Unlimited:
	case q.Remaining <= q.Reserved:
		return fmt.Errorf("sqlite: key id %q: reserving %d with %d left, all reserved: %w", keyID, amount, q.Remaining, auth.ErrQuotaExceeded)
	default:
		q.Reserved = sqlstore.AddSat(q.Reserved, amount)
		u.dirty[keyID] = true
	}
	return nil
}

// Settle implements [auth.KeyStore]. A negative amount is an error and
// changes nothing. It returns at once, with the key's new quota; the
// file follows within [Options].CommitDelay (see [KeyStore]).
func (s *KeyStore) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	if p.Reserved < 0 || p.Used < 0 {
		return auth.Quota{}, fmt.Errorf("sqlite: Settle: negative amount (reserved %d, used %d)", p.Reserved, p.Used)
	}
	u := &s.db.usage
	u.mu.Lock()
	q, err := u.loadLocked(ctx, s.db, p.KeyID)
	if err != nil {
		u.mu.Unlock()
		return auth.Quota{}, err
	}
	before := q.Remaining
	next, covered := sqlstore.Settle(*q, p)
	*q = next
	u.dirty[p.KeyID] = true
	if p.Model != "" {
		at := p.Time
		if at.IsZero() {
			at = time.Now()
		}
		u.rows = append(u.rows, usageRow{keyID: p.KeyID, model: p.Model, at: at.UnixNano(),
			input: max(p.InputTokens, 0), output: max(p.OutputTokens, 0), cost: auth.CleanCost(p.CostUSD),
			cached: max(p.CachedTokens, 0), cacheWrite: max(p.CacheWriteTokens, 0), reasoning: max(p.ReasoningTokens, 0)})
	}
	if !covered {
		err = fmt.Errorf("sqlite: key id %q: used %d with %d left: %w", p.KeyID, p.Used, before, auth.ErrQuotaExceeded)
	}
	u.mu.Unlock()
	u.wake()
	return next, err
}

// PendingUsage returns the number of usage rows (one per Settle with a
// model) that wait to be written (telemetry.UsageWriter).
func (s *KeyStore) PendingUsage() int { return s.db.usage.pending() }

// FailedUsageWrites returns the number of group commits that failed
// (telemetry.UsageWriter); each is tried again.
func (s *KeyStore) FailedUsageWrites() uint64 { return s.db.usage.failed.Load() }

// usageState is the quota of the keys that Reserve and Settle have
// touched, held in memory by the DB: as one process uses the file, this
// copy is the authority, and a writer goroutine brings the file up to it
// in group commits (see [KeyStore]).
type usageState struct {
	mu     sync.Mutex
	quotas map[string]*auth.Quota // by key id
	dirty  map[string]bool        // ids whose quota the file lags
	rows   []usageRow             // usage rows not yet in the file

	// flushing is held by a flush from taking what is dirty to its
	// commit, so that commits carry the quotas in the order they were
	// taken (the writer's, and those of Usage, which flushes first).
	flushing sync.Mutex

	// committing counts the usage rows taken by the commit under way.
	committing int

	delay time.Duration // Options.CommitDelay: how long a commit gathers
	max   int           // Options.MaxPendingUsage
	log   *slog.Logger  // Options.Logger
	kick  chan struct{} // something is dirty (buffered: one pending kick)
	stop  chan struct{} // closed by Close
	done  chan struct{} // closed when the writer has ended
	once  sync.Once     // of close

	// failed counts the commits that failed; the writer's record of
	// its failures, for its logs, is failingSince, loggedAt and failures
	// (the writer's goroutine only).
	failed       atomic.Uint64
	failingSince time.Time
	loggedAt     time.Time
	failures     int
}

// The writer's back-off after a commit failed: it tries again, doubling
// the wait, until one succeeds.
const (
	retryMin = 50 * time.Millisecond
	retryMax = 5 * time.Second
)

// failureLogEvery is how often the writer logs that its commits keep
// failing: the first failure at once, then once per interval while they
// do, and once when a commit goes through again.
const failureLogEvery = time.Minute

func (u *usageState) init(delay time.Duration, maxPending int, log *slog.Logger) {
	u.delay = max(delay, 0)
	u.max = maxPending
	u.log = log
	u.quotas = make(map[string]*auth.Quota)
	u.dirty = make(map[string]bool)
	u.kick = make(chan struct{}, 1)
	u.stop = make(chan struct{})
	u.done = make(chan struct{})
}

// wake tells the writer that a quota is dirty.
func (u *usageState) wake() {
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// loadLocked returns the quota of the key with id keyID, read from the
// file the first time, or an error wrapping auth.ErrKeyNotFound.
func (u *usageState) loadLocked(ctx context.Context, db *DB, keyID string) (*auth.Quota, error) {
	if q, ok := u.quotas[keyID]; ok {
		return q, nil
	}
	var q auth.Quota
	err := db.reader.QueryRowContext(ctx, `SELECT unlimited, remaining, reserved, used, budget_usd, cost_usd FROM keys WHERE id = ?`, keyID).
		Scan(&q.Unlimited, &q.Remaining, &q.Reserved, &q.Used, &q.BudgetUSD, &q.CostUSD)
	switch {
	case errNoRows(err):
		return nil, fmt.Errorf("sqlite: key id %q: %w", keyID, auth.ErrKeyNotFound)
	case err != nil:
		return nil, fmt.Errorf("sqlite: key id %q: %w", keyID, err)
	}
	u.quotas[keyID] = &q
	return &q, nil
}

// run is the writer: woken by a dirty quota, it lets the Settles of the
// next u.delay gather, then writes every dirty quota in one transaction
// (one row per key, however many Settles). It returns when u.stop is
// closed; Close then writes what is left.
func (u *usageState) run(db *DB) {
	defer close(u.done)
	retry := time.Duration(0)
	for {
		select {
		case <-u.kick:
		case <-u.stop:
			return
		}
		if wait := max(u.delay, retry); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-u.stop:
				t.Stop()
				return
			}
		}
		if err := u.flush(context.Background(), db); err != nil {
			u.logFailure(err)
			retry = min(max(2*retry, retryMin), retryMax)
			u.wake()
			continue
		}
		u.logRecovery()
		retry = 0
	}
}

// logFailure logs that a commit failed: the first of a run of failures at
// once, then once per failureLogEvery while they go on.
func (u *usageState) logFailure(err error) {
	now := time.Now()
	if u.failingSince.IsZero() {
		u.failingSince = now
	}
	u.failures++
	if !u.loggedAt.IsZero() && now.Sub(u.loggedAt) < failureLogEvery {
		return
	}
	u.loggedAt = now
	u.log.LogAttrs(context.Background(), slog.LevelError, "sqlite: the usage writer cannot write to the database; it keeps the usage and tries again",
		slog.Int("pending", u.pending()), slog.Int("failed_commits", u.failures),
		slog.Duration("failing_for", now.Sub(u.failingSince).Round(time.Millisecond)), slog.String("error", err.Error()))
}

// logRecovery logs that a commit went through after failures.
func (u *usageState) logRecovery() {
	if u.failingSince.IsZero() {
		return
	}
	u.log.LogAttrs(context.Background(), slog.LevelInfo, "sqlite: the usage writer writes to the database again",
		slog.Int("failed_commits", u.failures), slog.Duration("failed_for", time.Since(u.failingSince).Round(time.Millisecond)))
	u.failingSince, u.loggedAt, u.failures = time.Time{}, time.Time{}, 0
}

// pending returns the number of usage rows not yet written: queued, or
// in the commit under way.
func (u *usageState) pending() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.rows) + u.committing
}

// flush writes every dirty quota in one transaction, within ctx. On
// failure the quotas are dirty again, for the next try.
func (u *usageState) flush(ctx context.Context, db *DB) error {
	u.flushing.Lock()
	defer u.flushing.Unlock()
	u.mu.Lock()
	if len(u.dirty) == 0 && len(u.rows) == 0 {
		u.mu.Unlock()
		return nil
	}
	ids := make([]string, 0, len(u.dirty))
	rows := make([]auth.Quota, 0, len(u.dirty))
	for id := range u.dirty {
		q, ok := u.quotas[id]
		if !ok { // deleted
			continue
		}
		ids = append(ids, id)
		rows = append(rows, *q)
	}
	clear(u.dirty)
	usage := u.rows
	u.rows = nil
	u.committing = len(usage)
	u.mu.Unlock()

	err := db.writeQuotas(ctx, ids, rows, usage)
	db.writes.Note(err, writeFault)
	u.failed.Add(uint64(btoi(err != nil)))
	u.mu.Lock()
	defer u.mu.Unlock()
	u.committing = 0
	if err != nil {
		for _, id := range ids {
			u.dirty[id] = true
		}
		u.rows = append(usage, u.rows...)
	}
	return err
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// usageRow is a usage row not yet written.
type usageRow struct {
	keyID, model                  string
	at                            int64 // Unix ns
	input, output                 int64
	cached, cacheWrite, reasoning int64
	cost                          float64
}

// close stops the writer and writes what is still dirty. Only its first
// call does anything.
func (u *usageState) close(db *DB) error {
	var err error
	u.once.Do(func() {
		close(u.stop)
		<-u.done
		err = u.flush(context.Background(), db)
	})
	return err
}
