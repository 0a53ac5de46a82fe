package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// GetKey implements [auth.KeyAdmin].
func (s *KeyStore) GetKey(ctx context.Context, id string) (*auth.Key, error) {
	row := s.db.reader.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE id = ?`, id)
	k, err := scanKey(row)
	switch {
	case errNoRows(err):
		return nil, fmt.Errorf("sqlite: key id %q: %w", id, auth.ErrKeyNotFound)
	case err != nil:
		return nil, fmt.Errorf("sqlite: KeyStore.GetKey: %w", err)
	}
	s.db.usage.current(k)
	return k, nil
}

// ListKeys implements [auth.KeyAdmin].
func (s *KeyStore) ListKeys(ctx context.Context, p auth.ListKeysParams) ([]*auth.Key, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = auth.DefaultListLimit
	}
	rows, err := s.db.reader.QueryContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE id > ? ORDER BY id LIMIT ?`, p.After, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: KeyStore.ListKeys: %w", err)
	}
	defer rows.Close()
	var keys []*auth.Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: KeyStore.ListKeys: %w", err)
		}
		s.db.usage.current(k)
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: KeyStore.ListKeys: %w", err)
	}
	return keys, nil
}

// UpdateKey implements [auth.KeyAdmin]: fn is called once, in a write
// transaction, with the quotas in memory locked, so no Reserve or Settle
// is lost.
func (s *KeyStore) UpdateKey(ctx context.Context, id string, fn func(*auth.Key) error) (*auth.Key, error) {
	u := &s.db.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	var updated *auth.Key
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		k, err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM keys WHERE id = ?`, id))
		switch {
		case errNoRows(err):
			return fmt.Errorf("sqlite: key id %q: %w", id, auth.ErrKeyNotFound)
		case err != nil:
			return err
		}
		if q, ok := u.quotas[id]; ok {
			k.Quota = *q
		}
		c := k.Clone()
		if err := fn(c); err != nil {
			return err
		}
		updated = auth.UpdatedKey(k, c)
		expires, rateN, rateP, models, err := keyFields(updated)
		if err != nil {
			return err
		}
		q := updated.Quota
		_, err = tx.ExecContext(ctx, `UPDATE keys SET owner = ?, unlimited = ?, remaining = ?, reserved = ?, used = ?,
			expires_at = ?, disabled = ?, rate_requests = ?, rate_period_ns = ?, allowed_models = ?, budget_usd = ?, cost_usd = ?,
			granted = ? WHERE id = ?`,
			updated.Owner, q.Unlimited, q.Remaining, q.Reserved, q.Used, expires, updated.Disabled, rateN, rateP, models,
			q.BudgetUSD, q.CostUSD, updated.Granted, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	q := updated.Quota
	u.quotas[id] = &q
	// As in PutKey: a commit under way may carry an older copy of the
	// quota columns; the next one writes them again.
	u.dirty[id] = true
	u.wake()
	return updated.Clone(), nil
}

// DeleteKey implements [auth.KeyAdmin]. The key's usage rows stay.
func (s *KeyStore) DeleteKey(ctx context.Context, id string) error {
	u := &s.db.usage
	u.mu.Lock()
	defer u.mu.Unlock()
	var n int64
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM keys WHERE id = ?`, id)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: deleting key %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: key id %q: %w", id, auth.ErrKeyNotFound)
	}
	delete(u.quotas, id)
	delete(u.dirty, id)
	return nil
}

// Usage implements [auth.UsageReader]. It first commits the usage rows
// still in memory (see [KeyStore]), so that it reads every Settle that
// has returned, then sums the rows in one query.
func (s *KeyStore) Usage(ctx context.Context, p auth.UsageParams) ([]auth.UsageRow, error) {
	if err := s.db.usage.flush(ctx, s.db); err != nil {
		return nil, fmt.Errorf("sqlite: KeyStore.Usage: committing usage: %w", err)
	}
	group := sqlstore.UsageGroup(p.GroupBy, "date(at / 1000000000, 'unixepoch')")
	where, args := sqlstore.UsageFilter(p, func(t time.Time) any { return t.UnixNano() })
	q := `SELECT ` + group + `, count(*), total(input_tokens), total(output_tokens), total(cost_usd),
		total(cached_tokens), total(cache_write_tokens), total(reasoning_tokens) FROM usage`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` GROUP BY 1 ORDER BY 1`
	rows, err := s.db.reader.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: KeyStore.Usage: %w", err)
	}
	defer rows.Close()
	var out []auth.UsageRow
	for rows.Next() {
		var (
			r                    auth.UsageRow
			g                    string
			in, out2             float64
			cached, write, think float64
		)
		if err := rows.Scan(&g, &r.Requests, &in, &out2, &r.CostUSD, &cached, &write, &think); err != nil {
			return nil, fmt.Errorf("sqlite: KeyStore.Usage: %w", err)
		}
		r.InputTokens, r.OutputTokens, r.CostUSD = tokens(in), tokens(out2), auth.CleanCost(r.CostUSD)
		r.CachedTokens, r.CacheWriteTokens, r.ReasoningTokens = tokens(cached), tokens(write), tokens(think)
		r.SetGroup(p.GroupBy, g)
		out = append(out, r)
	}
	return out, rows.Err()
}

// tokens is a sum of token counts that SQLite's total() returned as a
// float, saturating at math.MaxInt64 (a float that large does not convert
// to an int64: it would come out as the lowest one).
func tokens(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(max(f, 0))
}
