package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/responses"
)

// ResponseStore is the [responses.Store] of a [DB]: each response is one
// row, its JSON encoding keyed by owner and id, so any replica continues
// a conversation that another started. It is safe for concurrent use.
// Responses are kept until deleted.
type ResponseStore struct {
	db *DB
}

var _ responses.Store = (*ResponseStore)(nil)

// Put implements [responses.Store].
func (s *ResponseStore) Put(ctx context.Context, r *responses.StoredResponse) error {
	if r == nil || r.Response.ID == "" {
		return errors.New("postgres: Put: a stored response needs an id")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("postgres: encoding response %s: %w", r.Response.ID, err)
	}
	err = s.db.retry(ctx, func() error { // the same row however often it runs
		_, err := s.db.pool.Exec(ctx, s.db.q(`INSERT INTO gk_responses (owner, id, data) VALUES ($1, $2, $3)
			ON CONFLICT (owner, id) DO UPDATE SET data = excluded.data, updated_at = now()`), r.Owner, r.Response.ID, b)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: storing response %s: %w", r.Response.ID, err)
	}
	return nil
}

// Get implements [responses.Store].
func (s *ResponseStore) Get(ctx context.Context, owner, id string) (*responses.StoredResponse, error) {
	var b []byte
	err := s.db.retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, s.db.q(`SELECT data FROM gk_responses WHERE owner = $1 AND id = $2`), owner, id).Scan(&b)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: response %s: %w", id, responses.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading response %s: %w", id, err)
	}
	var r responses.StoredResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("postgres: decoding response %s: %w", id, err)
	}
	return &r, nil
}

// Delete implements [responses.Store].
func (s *ResponseStore) Delete(ctx context.Context, owner, id string) error {
	var tag pgconn.CommandTag
	// In a transaction: run again after a COMMIT whose answer was lost,
	// it would find nothing and say so.
	err := s.db.tx(ctx, false, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, s.db.q(`DELETE FROM gk_responses WHERE owner = $1 AND id = $2`), owner, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: deleting response %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: response %s: %w", id, responses.ErrNotFound)
	}
	return nil
}
