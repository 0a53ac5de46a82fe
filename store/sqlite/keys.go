package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
)

// KeyStore is the [auth.KeyStore] of a [DB]. It keeps the SHA-256 of each
// secret ([auth.HashSecret]), never the secret, and never logs. It is safe
// for concurrent use: Reserve and Settle are each one write transaction,
// so concurrent calls lose no update. Every Lookup reads the database:
// wrap the store in [auth.NewCachedKeyStore] to serve lookups from memory.
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
// changes nothing.
func (s *KeyStore) Reserve(ctx context.Context, keyID string, amount int64) error {
	if amount < 0 {
		return fmt.Errorf("sqlite: Reserve: negative amount %d", amount)
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE keys SET reserved = CASE WHEN unlimited THEN 0
		WHEN ?2 > 9223372036854775807 - reserved THEN 9223372036854775807 ELSE reserved + ?2 END
	WHERE id = ?1 AND (unlimited OR remaining > reserved)`, keyID, amount)
		if err != nil {
			return fmt.Errorf("sqlite: Reserve: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var remaining int64
		switch err := tx.QueryRowContext(ctx, `SELECT remaining FROM keys WHERE id = ?`, keyID).Scan(&remaining); {
		case errNoRows(err):
			return fmt.Errorf("sqlite: key id %q: %w", keyID, auth.ErrKeyNotFound)
		case err != nil:
			return fmt.Errorf("sqlite: Reserve: %w", err)
		}
		return fmt.Errorf("sqlite: key id %q: reserving %d with %d left, all reserved: %w", keyID, amount, remaining, auth.ErrQuotaExceeded)
	})
}

// Settle implements [auth.KeyStore]. A negative amount is an error and
// changes nothing.
func (s *KeyStore) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	if p.Reserved < 0 || p.Used < 0 {
		return auth.Quota{}, fmt.Errorf("sqlite: Settle: negative amount (reserved %d, used %d)", p.Reserved, p.Used)
	}
	var (
		q       auth.Quota
		covered bool
		before  int64
	)
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT unlimited, remaining, reserved, used FROM keys WHERE id = ?`, p.KeyID).
			Scan(&q.Unlimited, &q.Remaining, &q.Reserved, &q.Used)
		switch {
		case errNoRows(err):
			return fmt.Errorf("sqlite: key id %q: %w", p.KeyID, auth.ErrKeyNotFound)
		case err != nil:
			return fmt.Errorf("sqlite: Settle: %w", err)
		}
		before = q.Remaining
		q, covered = settle(q, p)
		_, err = tx.ExecContext(ctx, `UPDATE keys SET remaining = ?, reserved = ?, used = ? WHERE id = ?`,
			q.Remaining, q.Reserved, q.Used, p.KeyID)
		return err
	})
	if err != nil {
		return auth.Quota{}, err
	}
	if !covered {
		return q, fmt.Errorf("sqlite: key id %q: used %d with %d left: %w", p.KeyID, p.Used, before, auth.ErrQuotaExceeded)
	}
	return q, nil
}

// settle applies p to q as [auth.KeyStore.Settle] says, and reports
// whether the budget covered p.Used.
func settle(q auth.Quota, p auth.SettleParams) (auth.Quota, bool) {
	q.Reserved = max(q.Reserved-p.Reserved, 0)
	if p.Used > math.MaxInt64-q.Used {
		q.Used = math.MaxInt64
	} else {
		q.Used += p.Used
	}
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
