package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// RunStore is the [responses.RunStore] of a [DB], with the lease policy
// of that interface: any replica's [responses.Background] claims runs
// with SELECT … FOR UPDATE SKIP LOCKED, so concurrent claimers never
// wait for each other nor get the same run; a run whose replica died
// (its lease ran out) is taken over, or failed, by another replica's
// claim. The event log of a streamed run is in its own table, which a
// follower on any replica polls (responses.WithFollowInterval). Ended
// runs are kept until pruned (responses.WithRetention). It is safe for
// concurrent use.
type RunStore struct{ db *DB }

var _ responses.RunStore = (*RunStore)(nil)

func scanRun(row pgx.Row) (*responses.Run, error) {
	var b []byte
	if err := row.Scan(&b); err != nil {
		return nil, err
	}
	var r responses.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding a run: %w", err)
	}
	return &r, nil
}

// lockRun reads run id FOR UPDATE in tx.
func (s *RunStore) lockRun(ctx context.Context, tx pgx.Tx, id string) (*responses.Run, error) {
	r, err := scanRun(tx.QueryRow(ctx, s.db.q(`SELECT data FROM gk_runs WHERE id = $1 FOR UPDATE`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: run %s: %w", id, responses.ErrNotFound)
	}
	return r, err
}

func (s *RunStore) write(ctx context.Context, tx pgx.Tx, r *responses.Run, insert bool) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("postgres: encoding run %s: %w", r.ID, err)
	}
	if insert {
		_, err = tx.Exec(ctx, s.db.q(`INSERT INTO gk_runs (id, owner, status, done, created_ns, lease_ns, ended_ns, data)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`), r.ID, r.Owner, string(r.Status()), r.Done,
			r.CreatedAt.UnixNano(), ns(r.LeaseExpiresAt), ns(r.EndedAt), b)
		return err
	}
	_, err = tx.Exec(ctx, s.db.q(`UPDATE gk_runs SET status = $2, done = $3, lease_ns = $4, ended_ns = $5, data = $6 WHERE id = $1`),
		r.ID, string(r.Status()), r.Done, ns(r.LeaseExpiresAt), ns(r.EndedAt), b)
	return err
}

func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// CreateRun implements [responses.RunStore].
func (s *RunStore) CreateRun(ctx context.Context, r *responses.Run) error {
	if err := responses.CheckNewRun(r); err != nil {
		return err
	}
	err := s.db.tx(ctx, false, func(tx pgx.Tx) error { return s.write(ctx, tx, r, true) })
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("postgres: run %s: %w", r.ID, responses.ErrRunExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: creating run %s: %w", r.ID, err)
	}
	return nil
}

// GetRun implements [responses.RunStore].
func (s *RunStore) GetRun(ctx context.Context, owner, id string) (*responses.Run, error) {
	var r *responses.Run
	err := s.db.retry(ctx, func() (err error) {
		r, err = scanRun(s.db.pool.QueryRow(ctx, s.db.q(`SELECT data FROM gk_runs WHERE id = $1 AND owner = $2`), id, owner))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: run %s: %w", id, responses.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading run %s: %w", id, err)
	}
	return r, nil
}

// ClaimRun implements [responses.RunStore] in one transaction.
func (s *RunStore) ClaimRun(ctx context.Context, p responses.RunClaim) (*responses.Run, []*responses.Run, error) {
	return sqlstore.ClaimRun("postgres", p, claimBatch, s.inTx(ctx))
}

// UpdateRun implements [responses.RunStore].
func (s *RunStore) UpdateRun(ctx context.Context, p responses.RunUpdate) (*responses.Run, error) {
	return sqlstore.UpdateRun(p, s.inTx(ctx))
}

// CancelRun implements [responses.RunStore].
func (s *RunStore) CancelRun(ctx context.Context, owner, id string, now time.Time) (*responses.Run, error) {
	return sqlstore.CancelRun(owner, id, now, s.inTx(ctx))
}

// inTx runs f in a write transaction (retried), with the reads and
// writes of runs of sqlstore.RunTx.
func (s *RunStore) inTx(ctx context.Context) func(f func(sqlstore.RunTx) error) error {
	return func(f func(sqlstore.RunTx) error) error {
		return s.db.tx(ctx, true, func(tx pgx.Tx) error {
			return f(sqlstore.RunTx{
				Expired: func(now time.Time) ([]*responses.Run, error) {
					rows, err := tx.Query(ctx, s.db.q(`SELECT data FROM gk_runs
						WHERE NOT done AND status IN ('in_progress', 'cancelled') AND lease_ns <= $1
						ORDER BY created_ns, id LIMIT $2 FOR UPDATE SKIP LOCKED`), now.UnixNano(), claimBatch)
					if err != nil {
						return nil, err
					}
					return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*responses.Run, error) { return scanRun(r) })
				},
				Queued: func() (*responses.Run, error) {
					r, err := scanRun(tx.QueryRow(ctx, s.db.q(`SELECT data FROM gk_runs WHERE NOT done AND status = 'queued'
						ORDER BY created_ns, id LIMIT 1 FOR UPDATE SKIP LOCKED`)))
					if errors.Is(err, pgx.ErrNoRows) {
						return nil, nil
					}
					return r, err
				},
				Get:     func(id string) (*responses.Run, error) { return s.lockRun(ctx, tx, id) },
				Missing: func(id string) error { return fmt.Errorf("postgres: run %s: %w", id, responses.ErrNotFound) },
				Write:   func(r *responses.Run) error { return s.write(ctx, tx, r, false) },
			})
		})
	}
}

// AppendEvents implements [responses.RunStore].
func (s *RunStore) AppendEvents(ctx context.Context, id string, attempt int, events []responses.Event) error {
	return s.db.tx(ctx, false, func(tx pgx.Tx) error {
		r, err := s.lockRun(ctx, tx, id)
		switch {
		case err != nil:
			return err
		case r.Done:
			return responses.ErrRunEnded
		case r.Attempts != attempt:
			return responses.ErrLeaseLost
		}
		if err := responses.CheckEvents(r.Events, events); err != nil {
			return err
		}
		seqs, types, data := make([]int64, len(events)), make([]string, len(events)), make([][]byte, len(events))
		for i, e := range events {
			seqs[i], types[i], data[i] = int64(e.Seq), e.Type, e.Data
		}
		if _, err := tx.Exec(ctx, s.db.q(`INSERT INTO gk_run_events (run_id, seq, type, data)
			SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::bytea[])`), id, seqs, types, data); err != nil {
			return err
		}
		r.Events += len(events)
		if r.Events > responses.MaxRunEvents {
			if _, err := tx.Exec(ctx, s.db.q(`DELETE FROM gk_run_events WHERE run_id = $1 AND seq < $2`), id, r.Events-responses.MaxRunEvents); err != nil {
				return err
			}
		}
		return s.write(ctx, tx, r, false)
	})
}

// Events implements [responses.RunStore].
func (s *RunStore) Events(ctx context.Context, id string, after, limit int) ([]responses.Event, error) {
	if limit <= 0 {
		limit = responses.MaxRunEvents
	}
	var out []responses.Event
	err := s.db.retry(ctx, func() error {
		out = []responses.Event{}
		var oldest *int64
		err := s.db.pool.QueryRow(ctx, s.db.q(`SELECT (SELECT min(seq) FROM gk_run_events WHERE run_id = $1) FROM gk_runs WHERE id = $1`), id).Scan(&oldest)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: run %s: %w", id, responses.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if oldest != nil && *oldest > int64(after)+1 {
			return fmt.Errorf("%w: the oldest kept is %d", responses.ErrEventsDropped, *oldest)
		}
		rows, err := s.db.pool.Query(ctx, s.db.q(`SELECT seq, type, data FROM gk_run_events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`), id, after, limit)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (responses.Event, error) {
			var e responses.Event
			var seq int64
			err := r.Scan(&seq, &e.Type, &e.Data)
			e.Seq = int(seq)
			return e, err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = []responses.Event{}
	}
	return out, nil
}

// DeleteRun implements [responses.RunStore]; its events go with it.
func (s *RunStore) DeleteRun(ctx context.Context, owner, id string) (*responses.Run, error) {
	var out *responses.Run
	err := s.db.tx(ctx, false, func(tx pgx.Tx) error {
		r, err := scanRun(tx.QueryRow(ctx, s.db.q(`DELETE FROM gk_runs WHERE id = $1 AND owner = $2 RETURNING data`), id, owner))
		out = r
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: run %s: %w", id, responses.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: deleting run %s: %w", id, err)
	}
	return out, nil
}

// PruneRuns implements [responses.RunStore].
func (s *RunStore) PruneRuns(ctx context.Context, before time.Time) (int, error) {
	var tag pgconn.CommandTag
	err := s.db.tx(ctx, true, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, s.db.q(`DELETE FROM gk_runs WHERE done AND ended_ns < $1`), before.UnixNano())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: pruning runs: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
