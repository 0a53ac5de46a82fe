package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
)

// KeyStore is the [auth.KeyStore] of a [DB]. It keeps the SHA-256 of each
// secret ([auth.HashSecret]), never the secret, and never logs. It is safe
// for concurrent use. Every Lookup reads the database: wrap the store in
// [auth.NewCachedKeyStore] to serve lookups from memory.
//
// Reserve and Settle are group-committed: the calls that arrive while a
// transaction of them is being written are written together in the next
// one, each applied in its order of arrival as if alone, so concurrent
// calls lose no update. A call returns once its transaction has
// committed: a returned Settle is durable, and a crash loses only the
// calls still waiting, which had not returned. A call alone is written at
// once (there is no timer); under load a call waits for at most the
// transaction in progress and its own.
type KeyStore struct{ db *DB }

var (
	_ auth.KeyStore  = (*KeyStore)(nil)
	_ auth.KeyPutter = (*KeyStore)(nil)
)

const keyColumns = `id, owner, unlimited, remaining, reserved, used, expires_at, disabled, rate_requests, rate_period_ns, allowed_models`

// Add stores k under secret, as it is (its quota included), and returns
// an error wrapping [auth.ErrDuplicateKey] if k.ID or secret is already
// stored. secret must be well-formed ([auth.ValidSecret]) and k.ID not
// empty. Use PutKey to upsert keys from a configuration.
func (s *KeyStore) Add(ctx context.Context, secret string, k auth.Key) error {
	if err := checkKey(secret, k); err != nil {
		return fmt.Errorf("sqlite: KeyStore.Add: %w", err)
	}
	q := k.Quota
	q.Remaining, q.Reserved, q.Used = max(q.Remaining, 0), max(q.Reserved, 0), max(q.Used, 0)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		if err := checkDuplicate(ctx, tx, secret, k.ID, true); err != nil {
			return fmt.Errorf("sqlite: KeyStore.Add: %w", err)
		}
		return insertKey(ctx, tx, secret, k, q)
	})
}

// PutKey implements [auth.KeyPutter]: it stores k under secret, or
// updates the stored key with id k.ID. An update replaces every field
// but the usage ([auth.Budget]): the secret (the old one stops working),
// the owner, the limits, and the budget, which k.Quota.Remaining gives
// whole, so the stored Remaining becomes it less the usage already
// recorded (never below 0). Reserved and Used are kept. A secret stored
// under another id is an error wrapping [auth.ErrDuplicateKey]. The
// update is one write transaction, so it loses no concurrent Reserve or
// Settle.
func (s *KeyStore) PutKey(ctx context.Context, secret string, k auth.Key) error {
	if err := checkKey(secret, k); err != nil {
		return fmt.Errorf("sqlite: KeyStore.PutKey: %w", err)
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		if err := checkDuplicate(ctx, tx, secret, k.ID, false); err != nil {
			return fmt.Errorf("sqlite: KeyStore.PutKey: %w", err)
		}
		var used, reserved int64
		err := tx.QueryRowContext(ctx, `SELECT used, reserved FROM keys WHERE id = ?`, k.ID).Scan(&used, &reserved)
		switch {
		case errNoRows(err):
		case err != nil:
			return err
		default:
			if _, err := tx.ExecContext(ctx, `DELETE FROM keys WHERE id = ?`, k.ID); err != nil {
				return err
			}
		}
		q := auth.Budget(k.Quota, used, reserved)
		return insertKey(ctx, tx, secret, k, q)
	})
}

func checkKey(secret string, k auth.Key) error {
	switch {
	case k.ID == "":
		return errors.New("empty key id")
	case !auth.ValidSecret(secret):
		return fmt.Errorf("key %q: %w", k.ID, auth.ErrMalformedCredential)
	}
	return nil
}

// checkDuplicate returns an error wrapping auth.ErrDuplicateKey if secret
// is stored under an id other than id, or (with idToo) if id is stored.
func checkDuplicate(ctx context.Context, tx *sql.Tx, secret, id string, idToo bool) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT id FROM keys WHERE secret_hash = ?`, auth.HashSecret(secret)).Scan(&other)
	switch {
	case err == nil && (other != id || idToo):
		return fmt.Errorf("key %q: secret already stored: %w", id, auth.ErrDuplicateKey)
	case err != nil && !errNoRows(err):
		return err
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
	var expires sql.NullString
	if !k.ExpiresAt.IsZero() {
		expires = sql.NullString{String: k.ExpiresAt.UTC().Format(time.RFC3339Nano), Valid: true}
	}
	var rateN, rateP sql.NullInt64
	if k.RateLimit != nil {
		rateN = sql.NullInt64{Int64: int64(k.RateLimit.Requests), Valid: true}
		rateP = sql.NullInt64{Int64: int64(k.RateLimit.Period), Valid: true}
	}
	models := k.AllowedModels
	if models == nil {
		models = []string{}
	}
	m, err := json.Marshal(models)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO keys (id, secret_hash, `+keyColumns[len("id, "):]+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, auth.HashSecret(secret), k.Owner, q.Unlimited, q.Remaining, q.Reserved, q.Used,
		expires, k.Disabled, rateN, rateP, string(m))
	return err
}

// Lookup implements [auth.KeyStore].
func (s *KeyStore) Lookup(ctx context.Context, secret string) (*auth.Key, error) {
	row := s.db.reader.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE secret_hash = ?`, auth.HashSecret(secret))
	var (
		k       auth.Key
		expires sql.NullString
		rateN   sql.NullInt64
		rateP   sql.NullInt64
		models  string
	)
	err := row.Scan(&k.ID, &k.Owner, &k.Quota.Unlimited, &k.Quota.Remaining, &k.Quota.Reserved, &k.Quota.Used,
		&expires, &k.Disabled, &rateN, &rateP, &models)
	switch {
	case errNoRows(err):
		return nil, auth.ErrKeyNotFound
	case err != nil:
		return nil, fmt.Errorf("sqlite: KeyStore.Lookup: %w", err)
	}
	if expires.Valid {
		if k.ExpiresAt, err = time.Parse(time.RFC3339Nano, expires.String); err != nil {
			return nil, fmt.Errorf("sqlite: KeyStore.Lookup: key %q: expires_at: %w", k.ID, err)
		}
	}
	if rateN.Valid {
		k.RateLimit = &auth.Limit{Requests: int(rateN.Int64), Period: time.Duration(rateP.Int64)}
	}
	if err := json.Unmarshal([]byte(models), &k.AllowedModels); err != nil {
		return nil, fmt.Errorf("sqlite: KeyStore.Lookup: key %q: allowed_models: %w", k.ID, err)
	}
	return &k, nil
}

// Reserve implements [auth.KeyStore]. A negative amount is an error and
// changes nothing. It is group-committed (see [KeyStore]).
func (s *KeyStore) Reserve(ctx context.Context, keyID string, amount int64) error {
	if amount < 0 {
		return fmt.Errorf("sqlite: Reserve: negative amount %d", amount)
	}
	op := &keyOp{reserve: true, p: auth.SettleParams{KeyID: keyID, Reserved: amount}}
	s.db.usage.submit(ctx, s.db, op)
	return op.err
}

// Settle implements [auth.KeyStore]. A negative amount is an error and
// changes nothing. It is group-committed (see [KeyStore]).
func (s *KeyStore) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	if p.Reserved < 0 || p.Used < 0 {
		return auth.Quota{}, fmt.Errorf("sqlite: Settle: negative amount (reserved %d, used %d)", p.Reserved, p.Used)
	}
	op := &keyOp{p: p}
	s.db.usage.submit(ctx, s.db, op)
	return op.q, op.err
}

// A keyOp is one Reserve (reserve set, the amount in p.Reserved) or
// Settle waiting for its group commit, and then its result.
type keyOp struct {
	reserve bool
	p       auth.SettleParams
	wake    chan bool // true: lead the next batch; false: the result is in
	q       auth.Quota
	err     error
}

// usageBatcher group-commits the Reserve and Settle calls of a DB: the
// calls that arrive while a batch is being written wait, and the first of
// them then writes them all in one transaction, which reads each key
// once, applies the calls in their order of arrival and writes each key
// once. There is no timer: a call alone is written at once, and under
// load a call waits for at most the batch in progress and its own.
type usageBatcher struct {
	mu      sync.Mutex
	pending []*keyOp
	running bool
}

// submit queues op and returns once its batch is committed (or failed),
// with op's result set.
func (b *usageBatcher) submit(ctx context.Context, db *DB, op *keyOp) {
	op.wake = make(chan bool, 1)
	b.mu.Lock()
	b.pending = append(b.pending, op)
	lead := !b.running
	b.running = true
	b.mu.Unlock()
	if !lead && !<-op.wake {
		return
	}
	b.mu.Lock()
	batch := b.pending
	b.pending = nil
	b.mu.Unlock()

	// The batch carries other callers' calls: it is written even if this
	// caller's context ends.
	runBatch(context.WithoutCancel(ctx), db, batch)
	for _, o := range batch {
		if o != op {
			o.wake <- false
		}
	}
	b.mu.Lock()
	if len(b.pending) > 0 {
		b.pending[0].wake <- true
	} else {
		b.running = false
	}
	b.mu.Unlock()
}

// runBatch applies batch in one write transaction and sets each op's
// result; if the transaction fails, every op gets the error.
func runBatch(ctx context.Context, db *DB, batch []*keyOp) {
	type state struct {
		q       auth.Quota
		found   bool
		changed bool
	}
	keys := make(map[string]*state, 1)
	err := db.write(ctx, func(tx *sql.Tx) error {
		for _, op := range batch {
			op.q, op.err = auth.Quota{}, nil
			st, ok := keys[op.p.KeyID]
			if !ok {
				st = &state{}
				keys[op.p.KeyID] = st
				err := tx.QueryRowContext(ctx, `SELECT unlimited, remaining, reserved, used FROM keys WHERE id = ?`, op.p.KeyID).
					Scan(&st.q.Unlimited, &st.q.Remaining, &st.q.Reserved, &st.q.Used)
				switch {
				case errNoRows(err):
				case err != nil:
					return fmt.Errorf("sqlite: key id %q: %w", op.p.KeyID, err)
				default:
					st.found = true
				}
			}
			if !st.found {
				op.err = fmt.Errorf("sqlite: key id %q: %w", op.p.KeyID, auth.ErrKeyNotFound)
				continue
			}
			if op.reserve {
				if st.q.Unlimited {
					continue
				}
				if st.q.Remaining <= st.q.Reserved {
					op.err = fmt.Errorf("sqlite: key id %q: reserving %d with %d left, all reserved: %w",
						op.p.KeyID, op.p.Reserved, st.q.Remaining, auth.ErrQuotaExceeded)
					continue
				}
				st.q.Reserved = addSat(st.q.Reserved, op.p.Reserved)
				st.changed = true
				continue
			}
			before := st.q.Remaining
			var covered bool
			st.q, covered = settle(st.q, op.p)
			st.changed = true
			op.q = st.q
			if !covered {
				op.err = fmt.Errorf("sqlite: key id %q: used %d with %d left: %w", op.p.KeyID, op.p.Used, before, auth.ErrQuotaExceeded)
			}
		}
		for id, st := range keys {
			if !st.changed {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE keys SET remaining = ?, reserved = ?, used = ? WHERE id = ?`,
				st.q.Remaining, st.q.Reserved, st.q.Used, id); err != nil {
				return fmt.Errorf("sqlite: key id %q: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		for _, op := range batch {
			op.q, op.err = auth.Quota{}, err
		}
	}
}

func addSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

// settle applies p to q as [auth.KeyStore.Settle] says, and reports
// whether the budget covered p.Used.
func settle(q auth.Quota, p auth.SettleParams) (auth.Quota, bool) {
	q.Reserved = max(q.Reserved-p.Reserved, 0)
	q.Used = addSat(q.Used, p.Used)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
		return q, true
	}
	if p.Used > q.Remaining {
		q.Remaining = 0
		return q, p.Used == 0
	}
	q.Remaining -= p.Used
	return q, true
}
