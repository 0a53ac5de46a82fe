package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// ConversationStore is the [conversations.Store] of a [DB]: each
// conversation is a row, and each of its items a row of its own, as JSON,
// numbered in the order they were added. Unlike the in-memory store it
// evicts nothing: conversations are kept until deleted. It is safe for
// concurrent use; items are added in one write transaction, all or none.
type ConversationStore struct{ db *DB }

var _ conversations.Store = (*ConversationStore)(nil)

// Create implements [conversations.Store].
func (s *ConversationStore) Create(ctx context.Context, owner string, c *conversations.Conversation, items []responses.Item) error {
	if c == nil || c.ID == "" {
		return errors.New("sqlite: ConversationStore.Create: the conversation has no id")
	}
	if id := sqlstore.DuplicateID(items); id != "" {
		return &responses.DuplicateItemError{ID: id}
	}
	metadata, err := json.Marshal(c.Metadata)
	if err != nil {
		return fmt.Errorf("sqlite: ConversationStore.Create %q: %w", c.ID, err)
	}
	rows, err := sqlstore.EncodeItems(items)
	if err != nil {
		return fmt.Errorf("sqlite: ConversationStore.Create %q: %w", c.ID, err)
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO conversations (owner, id, created_at, metadata, last_seq) VALUES (?, ?, ?, ?, ?)`,
			owner, c.ID, c.CreatedAt, metadata, len(items))
		if err != nil {
			return fmt.Errorf("sqlite: ConversationStore.Create %q: %w", c.ID, err)
		}
		return insertItems(ctx, tx, owner, c.ID, 1, items, rows)
	})
}

// insertItems inserts items, whose JSON is rows, numbered from first.
func insertItems(ctx context.Context, tx *sql.Tx, owner, id string, first int64, items []responses.Item, rows [][]byte) error {
	if len(items) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO conversation_items (owner, conversation_id, seq, id, data) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := range items {
		if _, err := stmt.ExecContext(ctx, owner, id, first+int64(i), items[i].ID, rows[i]); err != nil {
			return fmt.Errorf("sqlite: adding item %q to conversation %q: %w", items[i].ID, id, err)
		}
	}
	return nil
}

// conversation returns the conversation of a row.
func conversation(id string, createdAt int64, metadata []byte) (*conversations.Conversation, error) {
	c, err := sqlstore.Conversation(id, createdAt, metadata)
	if err != nil {
		return nil, fmt.Errorf("sqlite: conversation %q: %w", id, err)
	}
	return c, nil
}

func convNotFound(id string) error {
	return fmt.Errorf("%w: %q", conversations.ErrNotFound, id)
}

func convItemNotFound(id string) error {
	return fmt.Errorf("%w: %q", conversations.ErrItemNotFound, id)
}

// Get implements [conversations.Store].
func (s *ConversationStore) Get(ctx context.Context, owner, id string) (*conversations.Conversation, error) {
	var createdAt int64
	var metadata []byte
	err := s.db.reader.QueryRowContext(ctx, `SELECT created_at, metadata FROM conversations WHERE owner = ? AND id = ?`, owner, id).Scan(&createdAt, &metadata)
	switch {
	case errNoRows(err):
		return nil, convNotFound(id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: ConversationStore.Get %q: %w", id, err)
	}
	return conversation(id, createdAt, metadata)
}

// Update implements [conversations.Store].
func (s *ConversationStore) Update(ctx context.Context, owner, id string, metadata map[string]string) (*conversations.Conversation, error) {
	b, err := json.Marshal(metadata)
	if err != nil {
		return nil, fmt.Errorf("sqlite: ConversationStore.Update %q: %w", id, err)
	}
	var createdAt int64
	err = s.db.write(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `UPDATE conversations SET metadata = ? WHERE owner = ? AND id = ? RETURNING created_at`,
			b, owner, id).Scan(&createdAt)
	})
	switch {
	case errNoRows(err):
		return nil, convNotFound(id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: ConversationStore.Update %q: %w", id, err)
	}
	return conversation(id, createdAt, b)
}

// Delete implements [conversations.Store].
func (s *ConversationStore) Delete(ctx context.Context, owner, id string) error {
	return s.db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM conversations WHERE owner = ? AND id = ?`, owner, id)
		if err != nil {
			return fmt.Errorf("sqlite: ConversationStore.Delete %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, convNotFound(id))
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM conversation_items WHERE owner = ? AND conversation_id = ?`, owner, id)
		return err
	})
}

// AppendItems implements [conversations.Store]: in one write
// transaction, it numbers the items after the conversation's last, checks
// that the conversation holds none of their ids, and inserts them.
func (s *ConversationStore) AppendItems(ctx context.Context, owner, id string, items []responses.Item) error {
	if dup := sqlstore.DuplicateID(items); dup != "" {
		return &responses.DuplicateItemError{ID: dup}
	}
	rows, err := sqlstore.EncodeItems(items)
	if err != nil {
		return fmt.Errorf("sqlite: ConversationStore.AppendItems %q: %w", id, err)
	}
	return s.db.write(ctx, func(tx *sql.Tx) error {
		var last int64
		err := tx.QueryRowContext(ctx, `UPDATE conversations SET last_seq = last_seq + ? WHERE owner = ? AND id = ? RETURNING last_seq`,
			len(items), owner, id).Scan(&last)
		switch {
		case errNoRows(err):
			return convNotFound(id)
		case err != nil:
			return fmt.Errorf("sqlite: ConversationStore.AppendItems %q: %w", id, err)
		}
		if len(items) == 0 {
			return nil
		}
		held, err := tx.PrepareContext(ctx, `SELECT 1 FROM conversation_items WHERE owner = ? AND conversation_id = ? AND id = ?`)
		if err != nil {
			return err
		}
		defer held.Close()
		for i := range items {
			var one int
			err := held.QueryRowContext(ctx, owner, id, items[i].ID).Scan(&one)
			switch {
			case err == nil:
				return &responses.DuplicateItemError{ID: items[i].ID}
			case !errNoRows(err):
				return fmt.Errorf("sqlite: ConversationStore.AppendItems %q: %w", id, err)
			}
		}
		return insertItems(ctx, tx, owner, id, last-int64(len(items))+1, items, rows)
	})
}

// read runs fn in a read transaction: the statements of fn see one
// snapshot of the file.
func (s *ConversationStore) read(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}

// exists returns ErrNotFound unless owner has conversation id.
func exists(ctx context.Context, tx *sql.Tx, owner, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM conversations WHERE owner = ? AND id = ?`, owner, id).Scan(&one)
	if errNoRows(err) {
		return convNotFound(id)
	}
	return err
}

// scanItems decodes the items of rows, each a data column.
func scanItems(rows *sql.Rows) ([]responses.Item, error) {
	defer rows.Close()
	items := []responses.Item{}
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		var it responses.Item
		if err := json.Unmarshal(data, &it); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// ConversationItems implements [conversations.Store]
// (responses.ConversationStore).
func (s *ConversationStore) ConversationItems(ctx context.Context, owner, id string, limit int) ([]responses.Item, error) {
	var items []responses.Item
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := exists(ctx, tx, owner, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT data FROM conversation_items WHERE owner = ? AND conversation_id = ?
			ORDER BY seq DESC LIMIT ?`, owner, id, limit)
		if err != nil {
			return err
		}
		items, err = scanItems(rows)
		return err
	})
	if err != nil {
		return nil, wrapRead("ConversationItems", id, err)
	}
	for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
		items[i], items[j] = items[j], items[i]
	}
	return items, nil
}

// wrapRead wraps the error of a read of conversation id, but for the
// sentinels of the Store's contract.
func wrapRead(method, id string, err error) error {
	if errors.Is(err, conversations.ErrNotFound) || errors.Is(err, conversations.ErrItemNotFound) {
		return err
	}
	return fmt.Errorf("sqlite: ConversationStore.%s %q: %w", method, id, err)
}

// ListItems implements [conversations.Store].
func (s *ConversationStore) ListItems(ctx context.Context, owner, id string, q conversations.ItemQuery) ([]responses.Item, bool, error) {
	limit := max(q.Limit, 1)
	var items []responses.Item
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := exists(ctx, tx, owner, id); err != nil {
			return err
		}
		// after is a seq of the conversation; the page starts past it.
		after, cmp, order := sqlstore.ItemPage(q)
		if q.After != "" {
			err := tx.QueryRowContext(ctx, `SELECT seq FROM conversation_items WHERE owner = ? AND conversation_id = ? AND id = ?`,
				owner, id, q.After).Scan(&after)
			if errNoRows(err) {
				return convItemNotFound(q.After)
			}
			if err != nil {
				return err
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT data FROM conversation_items WHERE owner = ? AND conversation_id = ? AND seq `+cmp+` ?
			ORDER BY seq `+order+` LIMIT ?`, owner, id, after, limit+1)
		if err != nil {
			return err
		}
		items, err = scanItems(rows)
		return err
	})
	if err != nil {
		return nil, false, wrapRead("ListItems", id, err)
	}
	items, more := sqlstore.Page(items, limit)
	return items, more, nil
}

// GetItem implements [conversations.Store].
func (s *ConversationStore) GetItem(ctx context.Context, owner, id, itemID string) (*responses.Item, error) {
	// One statement: a conversation without the item gives a row whose
	// data is NULL; no conversation, no row.
	var data []byte
	err := s.db.reader.QueryRowContext(ctx, `SELECT i.data FROM conversations c
		LEFT JOIN conversation_items i ON i.owner = c.owner AND i.conversation_id = c.id AND i.id = ?
		WHERE c.owner = ? AND c.id = ?`, itemID, owner, id).Scan(&data)
	switch {
	case errNoRows(err):
		return nil, convNotFound(id)
	case err != nil:
		return nil, fmt.Errorf("sqlite: ConversationStore.GetItem %q: %w", id, err)
	case data == nil:
		return nil, convItemNotFound(itemID)
	}
	var it responses.Item
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, fmt.Errorf("sqlite: ConversationStore.GetItem %q: %w", id, err)
	}
	return &it, nil
}

// DeleteItem implements [conversations.Store].
func (s *ConversationStore) DeleteItem(ctx context.Context, owner, id, itemID string) (*conversations.Conversation, error) {
	var createdAt int64
	var metadata []byte
	err := s.db.write(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT created_at, metadata FROM conversations WHERE owner = ? AND id = ?`, owner, id).Scan(&createdAt, &metadata)
		if errNoRows(err) {
			return convNotFound(id)
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM conversation_items WHERE owner = ? AND conversation_id = ? AND id = ?`, owner, id, itemID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, convItemNotFound(itemID))
		}
		return nil
	})
	if err != nil {
		return nil, wrapRead("DeleteItem", id, err)
	}
	return conversation(id, createdAt, metadata)
}
