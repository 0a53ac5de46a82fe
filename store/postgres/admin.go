package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// GetKey implements [auth.KeyAdmin].
func (s *KeyStore) GetKey(ctx context.Context, id string) (*auth.Key, error) {
	if err := s.db.batcher.waitKey(ctx, id); err != nil {
		return nil, fmt.Errorf("postgres: getting key %q: %w", id, err)
	}
	var k *auth.Key
	err := s.db.retry(ctx, func() (err error) {
		k, err = scanKey(s.db.pool.QueryRow(ctx, s.db.q(`SELECT `+keyColumns+` FROM gk_keys k WHERE k.id = $1`), id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: key id %q: %w", id, auth.ErrKeyNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: getting key %q: %w", id, err)
	}
	return k, nil
}

// ListKeys implements [auth.KeyAdmin]. Ids are compared byte by byte
// (COLLATE "C"), as Go compares strings, whatever the database's
// collation.
func (s *KeyStore) ListKeys(ctx context.Context, p auth.ListKeysParams) ([]*auth.Key, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = auth.DefaultListLimit
	}
	if err := s.db.batcher.flush(ctx); err != nil {
		return nil, fmt.Errorf("postgres: listing keys: %w", err)
	}
	var keys []*auth.Key
	err := s.db.retry(ctx, func() error {
		rows, err := s.db.pool.Query(ctx, s.db.q(`SELECT `+keyColumns+` FROM gk_keys k
			WHERE k.id COLLATE "C" > $1 ORDER BY k.id COLLATE "C" LIMIT $2`), p.After, limit)
		if err != nil {
			return err
		}
		keys, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*auth.Key, error) { return scanKey(r) })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: listing keys: %w", err)
	}
	if len(keys) == 0 {
		keys = nil
	}
	return keys, nil
}

// UpdateKey implements [auth.KeyAdmin] in one transaction that locks the
// key's row (the lock that Reserve and Settle take), so no update of
// theirs is lost. fn is called again (on the key read again) if the
// transaction's connection is lost before it commits: it is then run
// again on a new connection.
func (s *KeyStore) UpdateKey(ctx context.Context, id string, fn func(*auth.Key) error) (*auth.Key, error) {
	if err := s.db.batcher.waitKey(ctx, id); err != nil {
		return nil, fmt.Errorf("postgres: updating key %q: %w", id, err)
	}
	defer s.db.batcher.invalidate(id)
	var updated *auth.Key
	err := s.db.tx(ctx, false, func(tx pgx.Tx) error {
		k, err := scanKey(tx.QueryRow(ctx, s.db.q(`SELECT `+keyColumns+` FROM gk_keys k WHERE k.id = $1 FOR UPDATE OF k`), id))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: key id %q: %w", id, auth.ErrKeyNotFound)
		}
		if err != nil {
			return fmt.Errorf("postgres: updating key %q: %w", id, err)
		}
		c := k.Clone()
		if err := fn(c); err != nil {
			return err
		}
		n := auth.UpdatedKey(k, c)
		args := keyArgs("", *n)
		_, err = tx.Exec(ctx, s.db.q(`UPDATE gk_keys SET owner = $2, unlimited = $3, remaining = $4, expires_at = $5, disabled = $6,
			rate_requests = $7, rate_period_ns = $8, allowed_models = $9, budget_usd = $10, granted = $11 WHERE id = $1`),
			id, n.Owner, n.Quota.Unlimited, args[4], args[6], n.Disabled, args[8], args[9], args[10], args[11], args[13])
		if err != nil {
			return fmt.Errorf("postgres: updating key %q: %w", id, err)
		}
		updated, err = scanKey(tx.QueryRow(ctx, s.db.q(`SELECT `+keyColumns+` FROM gk_keys k WHERE k.id = $1`), id))
		if err != nil {
			return fmt.Errorf("postgres: updating key %q: %w", id, err)
		}
		return nil
	})
	s.unlimited.Delete(id)
	if err != nil {
		return nil, err
	}
	return updated, nil
}

// DeleteKey implements [auth.KeyAdmin]; the key's reservations go with
// it, its usage rows stay.
func (s *KeyStore) DeleteKey(ctx context.Context, id string) error {
	if err := s.db.batcher.waitKey(ctx, id); err != nil {
		return fmt.Errorf("postgres: deleting key %q: %w", id, err)
	}
	defer s.db.batcher.invalidate(id)
	var tag pgconn.CommandTag
	// In a transaction: run again after a COMMIT whose answer was lost,
	// it would find nothing and say so.
	err := s.db.tx(ctx, false, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, s.db.q(`DELETE FROM gk_keys WHERE id = $1`), id)
		return err
	})
	s.unlimited.Delete(id)
	if err != nil {
		return fmt.Errorf("postgres: deleting key %q: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: key id %q: %w", id, auth.ErrKeyNotFound)
	}
	return nil
}

// Usage implements [auth.UsageReader]: one query that sums the rows of
// gk_usage, which gk_settle inserts with each settlement, after the
// Settles of this KeyStore still queued have committed ([KeyStore.Flush]).
func (s *KeyStore) Usage(ctx context.Context, p auth.UsageParams) ([]auth.UsageRow, error) {
	if err := s.db.batcher.flush(ctx); err != nil {
		return nil, fmt.Errorf("postgres: reading usage: %w", err)
	}
	group := sqlstore.UsageGroup(p.GroupBy, "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
	where, args := sqlstore.UsageFilter(p, func(t time.Time) any { return t })
	for i := range where {
		where[i] = strings.ReplaceAll(where[i], "?", "$"+strconv.Itoa(i+1))
	}
	// The sums saturate rather than fail: a bigint's sum is a numeric
	// that may not fit a bigint, and a sum of doubles raises an error on
	// overflow.
	q := `SELECT ` + group + `, count(*), LEAST(COALESCE(sum(input_tokens), 0), 9223372036854775807)::bigint,
		LEAST(COALESCE(sum(output_tokens), 0), 9223372036854775807)::bigint,
		LEAST(COALESCE(sum(cost_usd::numeric), 0), 1.7976931348623157e308)::double precision,
		LEAST(COALESCE(sum(cached_tokens), 0), 9223372036854775807)::bigint,
		LEAST(COALESCE(sum(cache_write_tokens), 0), 9223372036854775807)::bigint,
		LEAST(COALESCE(sum(reasoning_tokens), 0), 9223372036854775807)::bigint FROM gk_usage`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` GROUP BY 1 ORDER BY (` + group + `) COLLATE "C"`
	var out []auth.UsageRow
	err := s.db.retry(ctx, func() error {
		rows, err := s.db.pool.Query(ctx, s.db.q(q), args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (auth.UsageRow, error) {
			var (
				r auth.UsageRow
				g string
			)
			err := row.Scan(&g, &r.Requests, &r.InputTokens, &r.OutputTokens, &r.CostUSD, &r.CachedTokens, &r.CacheWriteTokens, &r.ReasoningTokens)
			r.SetGroup(p.GroupBy, g)
			return r, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading usage: %w", err)
	}
	if len(out) == 0 {
		out = nil
	}
	return out, nil
}
