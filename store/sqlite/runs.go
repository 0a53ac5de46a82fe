package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// RunStore is the [responses.RunStore] of a [DB]: the background
// responses, durable across restarts, with the lease policy of that
// interface. [Open] ends the leases of the runs a previous process was
// running, so that the new process takes them over at once (run again,
// or failed, as the policy says), and counts the quota that the runs not
// yet done reserved in their keys' reservations. Each claim, update,
// cancel and append is one write transaction (SQLite serialises them),
// so two claims never return the same run. A run whose process died is taken over (or failed) once its
// lease runs out. Ended runs are kept until pruned
// (responses.WithRetention).
type RunStore struct{ db *DB }

var _ responses.RunStore = (*RunStore)(nil)

// Runs returns the store of background responses.
func (db *DB) Runs() *RunStore { return &RunStore{db: db} }

type rowQuerier interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

func getRun(ctx context.Context, q rowQuerier, id string) (*responses.Run, error) {
	var data []byte
	err := q.QueryRowContext(ctx, `SELECT data FROM runs WHERE id = ?`, id).Scan(&data)
	switch {
	case errNoRows(err):
		return nil, fmt.Errorf("%w: run %s", responses.ErrNotFound, id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: run %s: %w", id, err)
	}
	var r responses.Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("sqlite: decoding run %s: %w", id, err)
	}
	return &r, nil
}

func putRun(ctx context.Context, tx *sql.Tx, r *responses.Run, insert bool) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("sqlite: run %s: %w", r.ID, err)
	}
	done := 0
	if r.Done {
		done = 1
	}
	var key sql.NullString
	var amount int64
	if r.Charge != nil {
		key, amount = sql.NullString{String: r.Charge.KeyID, Valid: true}, r.Charge.Amount
	}
	if insert {
		_, err = tx.ExecContext(ctx, `INSERT INTO runs (id, owner, status, done, created_at, lease_expires_at, ended_at, charge_key, charge_amount, data)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Owner, string(r.Status()), done, nanos(r.CreatedAt), nanos(r.LeaseExpiresAt), nanos(r.EndedAt), key, amount, data)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, done = ?, lease_expires_at = ?, ended_at = ?, data = ? WHERE id = ?`,
			string(r.Status()), done, nanos(r.LeaseExpiresAt), nanos(r.EndedAt), data, r.ID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: run %s: %w", r.ID, err)
	}
	return nil
}

// CreateRun implements [responses.RunStore].
func (s *RunStore) CreateRun(ctx context.Context, r *responses.Run) error {
	if err := responses.CheckNewRun(r); err != nil {
		return err
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		var one int
		switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, r.ID).Scan(&one); {
		case err == nil:
			return fmt.Errorf("%w: %s", responses.ErrRunExists, r.ID)
		case !errNoRows(err):
			return fmt.Errorf("sqlite: run %s: %w", r.ID, err)
		}
		return putRun(ctx, tx, r, true)
	})
}

// GetRun implements [responses.RunStore].
func (s *RunStore) GetRun(ctx context.Context, owner, id string) (*responses.Run, error) {
	r, err := getRun(ctx, s.db.reader, id)
	if err == nil && r.Owner != owner {
		return nil, fmt.Errorf("%w: run %s", responses.ErrNotFound, id)
	}
	return r, err
}

func queryRuns(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]*responses.Run, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*responses.Run
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		var r responses.Run
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("sqlite: decoding a run: %w", err)
		}
		out = append(out, &r)
	}
	return out, rows.Err()
}

// ClaimRun implements [responses.RunStore].
func (s *RunStore) ClaimRun(ctx context.Context, p responses.RunClaim) (*responses.Run, []*responses.Run, error) {
	return sqlstore.ClaimRun("sqlite", p, 0, s.inTx(ctx))
}

// UpdateRun implements [responses.RunStore].
func (s *RunStore) UpdateRun(ctx context.Context, p responses.RunUpdate) (*responses.Run, error) {
	return sqlstore.UpdateRun(p, s.inTx(ctx))
}

// CancelRun implements [responses.RunStore].
func (s *RunStore) CancelRun(ctx context.Context, owner, id string, now time.Time) (*responses.Run, error) {
	return sqlstore.CancelRun(owner, id, now, s.inTx(ctx))
}

// inTx runs f in a write transaction, with the reads and writes of runs
// of sqlstore.RunTx.
func (s *RunStore) inTx(ctx context.Context) func(f func(sqlstore.RunTx) error) error {
	return func(f func(sqlstore.RunTx) error) error {
		return s.db.write(ctx, func(tx *sql.Tx) error {
			return f(sqlstore.RunTx{
				Expired: func(now time.Time) ([]*responses.Run, error) {
					return queryRuns(ctx, tx, `SELECT data FROM runs WHERE done = 0 AND status IN ('in_progress', 'cancelled')
	AND lease_expires_at <= ? ORDER BY created_at, id`, now.UnixNano())
				},
				Queued: func() (*responses.Run, error) {
					queued, err := queryRuns(ctx, tx, `SELECT data FROM runs WHERE done = 0 AND status = 'queued' ORDER BY created_at, id LIMIT 1`)
					if err != nil || len(queued) == 0 {
						return nil, err
					}
					return queued[0], nil
				},
				Get:     func(id string) (*responses.Run, error) { return getRun(ctx, tx, id) },
				Missing: func(id string) error { return fmt.Errorf("%w: run %s", responses.ErrNotFound, id) },
				Write:   func(r *responses.Run) error { return putRun(ctx, tx, r, false) },
			})
		})
	}
}

// AppendEvents implements [responses.RunStore].
func (s *RunStore) AppendEvents(ctx context.Context, id string, attempt int, events []responses.Event) error {
	return s.db.write(ctx, func(tx *sql.Tx) error {
		r, err := getRun(ctx, tx, id)
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
		// Many rows a statement: a flush of a fast stream holds many events.
		for len(events) > 0 {
			batch := events[:min(len(events), 200)]
			events = events[len(batch):]
			query := strings.Repeat("(?, ?, ?, ?), ", len(batch))
			args := make([]any, 0, 4*len(batch))
			for _, e := range batch {
				args = append(args, id, e.Seq, e.Type, e.Data)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, type, data) VALUES `+query[:len(query)-2], args...); err != nil {
				return fmt.Errorf("sqlite: run %s: %w", id, err)
			}
			r.Events += len(batch)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_events WHERE run_id = ? AND seq < ?`, id, r.Events-responses.MaxRunEvents); err != nil {
			return fmt.Errorf("sqlite: run %s: %w", id, err)
		}
		return putRun(ctx, tx, r, false)
	})
}

// Events implements [responses.RunStore].
func (s *RunStore) Events(ctx context.Context, id string, after, limit int) ([]responses.Event, error) {
	if limit <= 0 {
		limit = -1
	}
	tx, err := s.db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: run %s: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	var oldest sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT min(seq) FROM run_events WHERE run_id = ?) FROM runs WHERE id = ?`, id, id).Scan(&oldest); err != nil {
		if errNoRows(err) {
			return nil, fmt.Errorf("%w: run %s", responses.ErrNotFound, id)
		}
		return nil, fmt.Errorf("sqlite: run %s: %w", id, err)
	}
	if oldest.Valid && oldest.Int64 > int64(after)+1 {
		return nil, fmt.Errorf("%w: the oldest kept is %d", responses.ErrEventsDropped, oldest.Int64)
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, type, data FROM run_events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: run %s: %w", id, err)
	}
	defer rows.Close()
	out := []responses.Event{}
	for rows.Next() {
		var e responses.Event
		if err := rows.Scan(&e.Seq, &e.Type, &e.Data); err != nil {
			return nil, fmt.Errorf("sqlite: run %s: %w", id, err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// DeleteRun implements [responses.RunStore].
func (s *RunStore) DeleteRun(ctx context.Context, owner, id string) (*responses.Run, error) {
	var out *responses.Run
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		r, err := getRun(ctx, tx, id)
		if err != nil {
			return err
		}
		if r.Owner != owner {
			return fmt.Errorf("%w: run %s", responses.ErrNotFound, id)
		}
		out = r
		if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id); err != nil {
			return fmt.Errorf("sqlite: run %s: %w", id, err)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM run_events WHERE run_id = ?`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PruneRuns implements [responses.RunStore].
func (s *RunStore) PruneRuns(ctx context.Context, before time.Time) (int, error) {
	var n int64
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_events WHERE run_id IN (SELECT id FROM runs WHERE done = 1 AND ended_at < ?)`, before.UnixNano()); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE done = 1 AND ended_at < ?`, before.UnixNano())
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: pruning runs: %w", err)
	}
	return int(n), nil
}
