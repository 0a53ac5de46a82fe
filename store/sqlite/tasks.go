package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/videos"
)

// TaskStore is the [videos.TaskStore] of a [DB]. It is safe for
// concurrent use. Each Claim is one write transaction that applies the
// lease policy and hands out one task, so two claims never return the
// same task; Update is one read-modify-write transaction
// ([videos.ApplyUpdate]). A task whose worker died (the process was
// killed) is claimed again once its lease has run out, and [Open] ends
// the leases of the tasks a previous process was running. It keeps every
// task until it is deleted: unlike the in-memory store it evicts nothing.
type TaskStore struct{ db *DB }

var _ videos.TaskStore = (*TaskStore)(nil)

// nanos returns t in Unix nanoseconds, 0 for the zero time.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// putTask writes t, inserting it with insert or replacing it.
func putTask(ctx context.Context, tx *sql.Tx, t *videos.Task, insert bool) error {
	data, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("sqlite: task %s: %w", t.ID, err)
	}
	var key sql.NullString
	var amount int64
	if t.Charge != nil {
		key, amount = sql.NullString{String: t.Charge.KeyID, Valid: true}, t.Charge.Amount
	}
	if insert {
		_, err = tx.ExecContext(ctx, `INSERT INTO tasks (id, owner, status, created_at, lease_expires_at, charge_key, charge_amount, data)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, t.ID, t.Owner, string(t.Status), nanos(t.CreatedAt), nanos(t.LeaseExpiresAt), key, amount, data)
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET status = ?, lease_expires_at = ?, charge_key = ?, charge_amount = ?, data = ? WHERE id = ?`,
			string(t.Status), nanos(t.LeaseExpiresAt), key, amount, data, t.ID)
	}
	if err != nil {
		return fmt.Errorf("sqlite: task %s: %w", t.ID, err)
	}
	return nil
}

func decodeTask(data []byte) (*videos.Task, error) {
	var t videos.Task
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("sqlite: decoding a task: %w", err)
	}
	return &t, nil
}

// getTask reads the task with id through q; owner, if not nil, must own it.
func getTask(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id string, owner *string) (*videos.Task, error) {
	var data []byte
	var err error
	if owner != nil {
		err = q.QueryRowContext(ctx, `SELECT data FROM tasks WHERE id = ? AND owner = ?`, id, *owner).Scan(&data)
	} else {
		err = q.QueryRowContext(ctx, `SELECT data FROM tasks WHERE id = ?`, id).Scan(&data)
	}
	switch {
	case errNoRows(err):
		return nil, fmt.Errorf("%w: %s", videos.ErrNotFound, id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: task %s: %w", id, err)
	}
	return decodeTask(data)
}

// Create implements [videos.TaskStore].
func (s *TaskStore) Create(ctx context.Context, t *videos.Task) error {
	if err := sqlstore.CheckNewTask(t); err != nil {
		return err
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		var one int
		switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, t.ID).Scan(&one); {
		case err == nil:
			return fmt.Errorf("%w: %s", videos.ErrExists, t.ID)
		case !errNoRows(err):
			return fmt.Errorf("sqlite: task %s: %w", t.ID, err)
		}
		return putTask(ctx, tx, t, true)
	})
}

// Get implements [videos.TaskStore].
func (s *TaskStore) Get(ctx context.Context, owner, id string) (*videos.Task, error) {
	return getTask(ctx, s.db.reader, id, &owner)
}

// Claim implements [videos.TaskStore].
func (s *TaskStore) Claim(ctx context.Context, p videos.ClaimParams) (*videos.Task, error) {
	if p.Worker == "" {
		return nil, fmt.Errorf("%w: Claim needs a worker name", videos.ErrInvalidParams)
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	lease := p.Lease
	if lease <= 0 {
		lease = videos.DefaultLease
	}
	maxAttempts := p.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = videos.DefaultMaxAttempts
	}
	var claimed *videos.Task
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		// Leases that ran out, oldest task first: fail the exhausted,
		// retry the first of the others.
		expired, err := queryTasks(ctx, tx, `SELECT data FROM tasks WHERE status = 'in_progress' AND lease_expires_at <= ?
	ORDER BY created_at, id`, now.UnixNano())
		if err != nil {
			return err
		}
		for _, t := range expired {
			if t.Worker == "" || t.Attempts < maxAttempts {
				if claimed == nil {
					claimed = t
				}
				continue
			}
			t.Status = videos.StatusFailed
			t.Error = &videos.TaskError{Code: videos.CodeGenerationFailed, Message: leaseMessage(t.Attempts)}
			t.CompletedAt = now
			t.Worker, t.LeaseExpiresAt = "", time.Time{}
			if err := putTask(ctx, tx, t, false); err != nil {
				return err
			}
		}
		if claimed == nil {
			queued, err := queryTasks(ctx, tx, `SELECT data FROM tasks WHERE status = 'queued' ORDER BY created_at, id LIMIT 1`)
			if err != nil {
				return err
			}
			if len(queued) == 0 {
				return nil
			}
			claimed = queued[0]
		}
		claimed.Status = videos.StatusInProgress
		claimed.Attempts++
		claimed.Worker = p.Worker
		claimed.LeaseExpiresAt = now.Add(lease)
		return putTask(ctx, tx, claimed, false)
	})
	switch {
	case err != nil:
		return nil, err
	case claimed == nil:
		return nil, videos.ErrNoTask
	}
	return claimed, nil
}

// leaseMessage is the error message of a task failed by the lease
// policy, as the in-memory store words it.
func leaseMessage(attempts int) string {
	if attempts == 1 {
		return "Video generation did not finish: the worker running it stopped responding."
	}
	return "Video generation did not finish: the workers running it stopped responding " + strconv.Itoa(attempts) + " times."
}

func queryTasks(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]*videos.Task, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: tasks: %w", err)
	}
	defer rows.Close()
	var out []*videos.Task
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("sqlite: tasks: %w", err)
		}
		t, err := decodeTask(data)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: tasks: %w", err)
	}
	return out, nil
}

// endLeases ends the lease of every running task, keeping its worker so
// that its next claim counts as an attempt (see [Open]).
func endLeases(ctx context.Context, tx *sql.Tx, now time.Time) error {
	running, err := queryTasks(ctx, tx, `SELECT data FROM tasks WHERE status = 'in_progress' AND lease_expires_at > ?`, now.UnixNano())
	if err != nil {
		return err
	}
	for _, t := range running {
		t.LeaseExpiresAt = now
		if err := putTask(ctx, tx, t, false); err != nil {
			return err
		}
	}
	return nil
}

// Update implements [videos.TaskStore].
func (s *TaskStore) Update(ctx context.Context, p videos.UpdateParams) (*videos.Task, error) {
	var out *videos.Task
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		t, err := getTask(ctx, tx, p.ID, nil)
		if err != nil {
			return err
		}
		if err := videos.ApplyUpdate(t, p); err != nil {
			return err
		}
		out = t
		return putTask(ctx, tx, t, false)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// List implements [videos.TaskStore].
func (s *TaskStore) List(ctx context.Context, p videos.ListParams) ([]*videos.Task, bool, error) {
	desc := p.Order != videos.OrderAsc
	query := `SELECT data FROM tasks WHERE owner = ?`
	args := []any{p.Owner}
	if p.After != "" {
		var created int64
		err := s.db.reader.QueryRowContext(ctx, `SELECT created_at FROM tasks WHERE id = ? AND owner = ?`, p.After, p.Owner).Scan(&created)
		switch {
		case errNoRows(err):
			return nil, false, fmt.Errorf("%w: %s", videos.ErrNotFound, p.After)
		case err != nil:
			return nil, false, fmt.Errorf("sqlite: tasks: %w", err)
		}
		if desc {
			query += ` AND (created_at, id) < (?, ?)`
		} else {
			query += ` AND (created_at, id) > (?, ?)`
		}
		args = append(args, created, p.After)
	}
	if desc {
		query += ` ORDER BY created_at DESC, id DESC`
	} else {
		query += ` ORDER BY created_at, id`
	}
	if p.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, p.Limit+1)
	}
	tasks, err := queryTasks(ctx, s.db.reader, query, args...)
	if err != nil {
		return nil, false, err
	}
	tasks, more := sqlstore.Page(tasks, p.Limit)
	return tasks, more, nil
}

// Delete implements [videos.TaskStore].
func (s *TaskStore) Delete(ctx context.Context, owner, id string) error {
	return s.db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE id = ? AND owner = ?`, id, owner)
		if err != nil {
			return fmt.Errorf("sqlite: task %s: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return fmt.Errorf("%w: %s", videos.ErrNotFound, id)
		}
		return nil
	})
}
