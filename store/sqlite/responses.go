package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gatewaykit/gatewaykit/responses"
)

// ResponseStore is the [responses.Store] of a [DB]. It keeps each
// response as JSON, by owner and id, until it is deleted: unlike the
// in-memory store it evicts nothing. It is safe for concurrent use.
type ResponseStore struct{ db *DB }

var _ responses.Store = (*ResponseStore)(nil)

// storedResponse is the JSON form of a responses.StoredResponse.
type storedResponse struct {
	Response responses.Response `json:"response"`
	Input    []responses.Item   `json:"input"`
}

// Put implements [responses.Store].
func (s *ResponseStore) Put(ctx context.Context, r *responses.StoredResponse) error {
	if r == nil || r.Response.ID == "" {
		return errors.New("sqlite: ResponseStore.Put: stored response has no id")
	}
	data, err := json.Marshal(storedResponse{Response: r.Response, Input: r.Input})
	if err != nil {
		return fmt.Errorf("sqlite: ResponseStore.Put %q: %w", r.Response.ID, err)
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO responses (owner, id, data, updated_at) VALUES (?, ?, ?, ?)
	ON CONFLICT (owner, id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
			r.Owner, r.Response.ID, data, time.Now().UnixNano())
		return err
	})
}

// Get implements [responses.Store].
func (s *ResponseStore) Get(ctx context.Context, owner, id string) (*responses.StoredResponse, error) {
	var data []byte
	err := s.db.reader.QueryRowContext(ctx, `SELECT data FROM responses WHERE owner = ? AND id = ?`, owner, id).Scan(&data)
	switch {
	case errNoRows(err):
		return nil, fmt.Errorf("%w: %q", responses.ErrNotFound, id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: ResponseStore.Get %q: %w", id, err)
	}
	var sr storedResponse
	if err := json.Unmarshal(data, &sr); err != nil {
		return nil, fmt.Errorf("sqlite: ResponseStore.Get %q: %w", id, err)
	}
	return &responses.StoredResponse{Owner: owner, Response: sr.Response, Input: sr.Input}, nil
}

// Delete implements [responses.Store].
func (s *ResponseStore) Delete(ctx context.Context, owner, id string) error {
	return s.db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM responses WHERE owner = ? AND id = ?`, owner, id)
		if err != nil {
			return fmt.Errorf("sqlite: ResponseStore.Delete %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, fmt.Errorf("%w: %q", responses.ErrNotFound, id))
		}
		return nil
	})
}
