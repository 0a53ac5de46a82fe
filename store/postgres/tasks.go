package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/videos"
)

// TaskStore is the [videos.TaskStore] of a [DB], with the lease policy
// of that interface: any replica's [runner.Runner] claims tasks with
// SELECT … FOR UPDATE SKIP LOCKED, so concurrent claimers never wait for
// each other nor get the same task, and a task whose worker died (its
// lease ran out) is claimed again by another replica. It is safe for
// concurrent use. Tasks are kept until deleted.
type TaskStore struct {
	db *DB
}

var _ videos.TaskStore = (*TaskStore)(nil)

// claimBatch is how many run-out leases a Claim examines per query.
const claimBatch = 16

// Create implements [videos.TaskStore].
func (s *TaskStore) Create(ctx context.Context, t *videos.Task) error {
	if err := sqlstore.CheckNewTask(t); err != nil {
		return err
	}
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("postgres: encoding task %s: %w", t.ID, err)
	}
	// In a transaction: run again after a COMMIT whose answer was lost,
	// it would find the task it created and fail.
	err = s.db.tx(ctx, false, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, s.db.q(`INSERT INTO gk_tasks (id, owner, status, created_ns, lease_ns, data)
			VALUES ($1, $2, $3, $4, $5, $6)`), t.ID, t.Owner, string(t.Status), t.CreatedAt.UnixNano(), leaseNS(t), b)
		return err
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("postgres: task %s: %w", t.ID, videos.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("postgres: creating task %s: %w", t.ID, err)
	}
	return nil
}

// Get implements [videos.TaskStore].
func (s *TaskStore) Get(ctx context.Context, owner, id string) (*videos.Task, error) {
	var t *videos.Task
	err := s.db.retry(ctx, func() (err error) {
		t, err = scanTask(s.db.pool.QueryRow(ctx, s.db.q(`SELECT data FROM gk_tasks WHERE id = $1 AND owner = $2`), id, owner))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: task %s: %w", id, videos.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading task %s: %w", id, err)
	}
	return t, nil
}

// Claim implements [videos.TaskStore] in one transaction: it locks the
// oldest in_progress tasks whose lease has run out, skipping those that
// another claimer holds, fails those that have spent their attempts and
// takes the first that has not; failing that, the oldest queued task.
func (s *TaskStore) Claim(ctx context.Context, p videos.ClaimParams) (*videos.Task, error) {
	if p.Worker == "" {
		return nil, fmt.Errorf("%w: Claim needs a worker name", videos.ErrInvalidParams)
	}
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	if p.Lease <= 0 {
		p.Lease = videos.DefaultLease
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = videos.DefaultMaxAttempts
	}
	var claimed *videos.Task
	// Repeatable: a claim whose COMMIT's answer was lost holds its task
	// until the lease runs out; the task is then claimed again (the
	// attempt counts), as if its worker had died.
	err := s.db.tx(ctx, true, func(tx pgx.Tx) error {
		claimed = nil
		for {
			rows, err := tx.Query(ctx, s.db.q(`SELECT data FROM gk_tasks
				WHERE status = 'in_progress' AND lease_ns <= $1
				ORDER BY created_ns, id LIMIT $2 FOR UPDATE SKIP LOCKED`), p.Now.UnixNano(), claimBatch)
			if err != nil {
				return err
			}
			expired, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*videos.Task, error) { return scanTask(r) })
			if err != nil {
				return err
			}
			for _, t := range expired {
				if t.Worker == "" || t.Attempts < p.MaxAttempts {
					claimed = t
					break
				}
				failLease(t, p.Now)
				if err := s.write(ctx, tx, t); err != nil {
					return err
				}
			}
			if claimed != nil || len(expired) < claimBatch {
				break
			}
		}
		if claimed == nil {
			t, err := scanTask(tx.QueryRow(ctx, s.db.q(`SELECT data FROM gk_tasks WHERE status = 'queued'
				ORDER BY created_ns, id LIMIT 1 FOR UPDATE SKIP LOCKED`)))
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			claimed = t
		}
		claimed.Status = videos.StatusInProgress
		claimed.Attempts++
		claimed.Worker = p.Worker
		claimed.LeaseExpiresAt = p.Now.Add(p.Lease)
		return s.write(ctx, tx, claimed)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: claiming a task: %w", err)
	}
	if claimed == nil {
		return nil, videos.ErrNoTask
	}
	return claimed, nil
}

// failLease fails t, whose lease has run out for the last time allowed,
// as videos.MemoryStore does.
func failLease(t *videos.Task, now time.Time) {
	msg := "Video generation did not finish: the worker running it stopped responding."
	if t.Attempts != 1 {
		msg = "Video generation did not finish: the workers running it stopped responding " + strconv.Itoa(t.Attempts) + " times."
	}
	t.Status = videos.StatusFailed
	t.Error = &videos.TaskError{Code: videos.CodeGenerationFailed, Message: msg}
	t.CompletedAt = now
	t.Worker, t.LeaseExpiresAt = "", time.Time{}
}

// Update implements [videos.TaskStore] with [videos.ApplyUpdate] on the
// task's row, locked for the transaction. It is repeatable (the same
// update gives the same task): run again because the answer of its
// COMMIT was lost, a Complete or Fail that finds the task finished that
// way by the same attempt returns it.
func (s *TaskStore) Update(ctx context.Context, p videos.UpdateParams) (*videos.Task, error) {
	var (
		out  *videos.Task
		runs int
	)
	err := s.db.tx(ctx, true, func(tx pgx.Tx) error {
		runs++
		t, err := scanTask(tx.QueryRow(ctx, s.db.q(`SELECT data FROM gk_tasks WHERE id = $1 FOR UPDATE`), p.ID))
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("postgres: task %s: %w", p.ID, videos.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if err := videos.ApplyUpdate(t, p); err != nil {
			if runs > 1 && errors.Is(err, videos.ErrFinished) && finishedBy(t, p) {
				out = t
				return nil
			}
			return err
		}
		out = t
		return s.write(ctx, tx, t)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// finishedBy reports whether t was finished by the update p: completed
// or failed, as p says, by p's attempt.
func finishedBy(t *videos.Task, p videos.UpdateParams) bool {
	return t.Attempts == p.Attempt &&
		(p.Complete != nil && t.Status == videos.StatusCompleted || p.Fail != nil && t.Status == videos.StatusFailed)
}

// write stores t over its row.
func (s *TaskStore) write(ctx context.Context, tx pgx.Tx, t *videos.Task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("postgres: encoding task %s: %w", t.ID, err)
	}
	_, err = tx.Exec(ctx, s.db.q(`UPDATE gk_tasks SET status = $2, lease_ns = $3, data = $4 WHERE id = $1`),
		t.ID, string(t.Status), leaseNS(t), b)
	return err
}

// List implements [videos.TaskStore].
func (s *TaskStore) List(ctx context.Context, p videos.ListParams) ([]*videos.Task, bool, error) {
	desc := p.Order != videos.OrderAsc
	var (
		afterNS int64
		afterID string
	)
	if p.After != "" {
		err := s.db.retry(ctx, func() error {
			return s.db.pool.QueryRow(ctx, s.db.q(`SELECT created_ns, id FROM gk_tasks WHERE id = $1 AND owner = $2`),
				p.After, p.Owner).Scan(&afterNS, &afterID)
		})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, false, fmt.Errorf("postgres: task %s: %w", p.After, videos.ErrNotFound)
		}
		if err != nil {
			return nil, false, fmt.Errorf("postgres: listing tasks: %w", err)
		}
	}
	query := `SELECT data FROM gk_tasks WHERE owner = $1 AND ($2 = '' OR (created_ns, id) > ($3, $2)) ORDER BY created_ns, id`
	if desc {
		query = `SELECT data FROM gk_tasks WHERE owner = $1 AND ($2 = '' OR (created_ns, id) < ($3, $2)) ORDER BY created_ns DESC, id DESC`
	}
	args := []any{p.Owner, afterID, afterNS}
	if p.Limit > 0 {
		query += ` LIMIT $4`
		args = append(args, p.Limit+1)
	}
	var tasks []*videos.Task
	err := s.db.retry(ctx, func() error {
		rows, err := s.db.pool.Query(ctx, s.db.q(query), args...)
		if err != nil {
			return err
		}
		tasks, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*videos.Task, error) { return scanTask(r) })
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("postgres: listing tasks: %w", err)
	}
	tasks, more := sqlstore.Page(tasks, p.Limit)
	return tasks, more, nil
}

// Delete implements [videos.TaskStore].
func (s *TaskStore) Delete(ctx context.Context, owner, id string) error {
	var tag pgconn.CommandTag
	// In a transaction: run again after a COMMIT whose answer was lost,
	// it would find nothing and say so.
	err := s.db.tx(ctx, false, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, s.db.q(`DELETE FROM gk_tasks WHERE id = $1 AND owner = $2`), id, owner)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: deleting task %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: task %s: %w", id, videos.ErrNotFound)
	}
	return nil
}

func scanTask(row pgx.Row) (*videos.Task, error) {
	var b []byte
	if err := row.Scan(&b); err != nil {
		return nil, err
	}
	var t videos.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decoding a task: %w", err)
	}
	return &t, nil
}

// leaseNS is the lease column of t: its lease's end in Unix nanoseconds
// while it is in_progress, else NULL.
func leaseNS(t *videos.Task) *int64 {
	if t.Status != videos.StatusInProgress {
		return nil
	}
	ns := t.LeaseExpiresAt.UnixNano()
	return &ns
}
