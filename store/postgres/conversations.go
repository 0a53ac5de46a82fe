package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// ConversationStore is the [conversations.Store] of a [DB]: each
// conversation is a row, and each of its items a row of its own, as JSON,
// numbered in the order they were added, so any replica lists and
// continues a conversation that another started. Items are added in one
// transaction, all or none; the additions to one conversation are
// serialised by its row's lock. Conversations are kept until deleted. It
// is safe for concurrent use.
type ConversationStore struct {
	db *DB
}

var _ conversations.Store = (*ConversationStore)(nil)

// itemColumns returns the ids and the JSON of items.
func itemColumns(items []responses.Item) (ids []string, data [][]byte, err error) {
	if data, err = sqlstore.EncodeItems(items); err != nil {
		return nil, nil, err
	}
	ids = make([]string, len(items))
	for i := range items {
		ids[i] = items[i].ID
	}
	return ids, data, nil
}

// insertItems inserts the items of ids and data, numbered from first.
func (s *ConversationStore) insertItems(ctx context.Context, tx pgx.Tx, owner, id string, first int64, ids []string, data [][]byte) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, s.db.q(`INSERT INTO gk_conversation_items (owner, conversation_id, seq, id, data)
		SELECT $1, $2, $3 + n - 1, item_id, item_data FROM unnest($4::text[], $5::bytea[]) WITH ORDINALITY AS i (item_id, item_data, n)`),
		owner, id, first, ids, data)
	return err
}

// Create implements [conversations.Store].
func (s *ConversationStore) Create(ctx context.Context, owner string, c *conversations.Conversation, items []responses.Item) error {
	if c == nil || c.ID == "" {
		return errors.New("postgres: ConversationStore.Create: the conversation has no id")
	}
	if id := sqlstore.DuplicateID(items); id != "" {
		return &responses.DuplicateItemError{ID: id}
	}
	metadata, err := json.Marshal(c.Metadata)
	if err != nil {
		return fmt.Errorf("postgres: encoding conversation %s: %w", c.ID, err)
	}
	ids, data, err := itemColumns(items)
	if err != nil {
		return fmt.Errorf("postgres: encoding conversation %s: %w", c.ID, err)
	}
	// In a transaction: run again after a COMMIT whose answer was lost,
	// it would find the conversation it created and fail.
	err = s.db.tx(ctx, false, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, s.db.q(`INSERT INTO gk_conversations (owner, id, created_at, metadata, last_seq) VALUES ($1, $2, $3, $4, $5)`),
			owner, c.ID, c.CreatedAt, metadata, len(items))
		if err != nil {
			return err
		}
		return s.insertItems(ctx, tx, owner, c.ID, 1, ids, data)
	})
	if err != nil {
		return fmt.Errorf("postgres: creating conversation %s: %w", c.ID, err)
	}
	return nil
}

// conversation returns the conversation of a row.
func conversation(id string, createdAt int64, metadata []byte) (*conversations.Conversation, error) {
	c, err := sqlstore.Conversation(id, createdAt, metadata)
	if err != nil {
		return nil, fmt.Errorf("postgres: decoding conversation %s: %w", id, err)
	}
	return c, nil
}

func convNotFound(id string) error {
	return fmt.Errorf("postgres: conversation %s: %w", id, conversations.ErrNotFound)
}

func convItemNotFound(id string) error {
	return fmt.Errorf("postgres: conversation item %s: %w", id, conversations.ErrItemNotFound)
}

// sentinel reports whether err carries a sentinel of the Store's
// contract, which is returned as it is.
func sentinel(err error) bool {
	var dup *responses.DuplicateItemError
	return errors.Is(err, conversations.ErrNotFound) || errors.Is(err, conversations.ErrItemNotFound) || errors.As(err, &dup)
}

// Get implements [conversations.Store].
func (s *ConversationStore) Get(ctx context.Context, owner, id string) (*conversations.Conversation, error) {
	var createdAt int64
	var metadata []byte
	err := s.db.retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, s.db.q(`SELECT created_at, metadata FROM gk_conversations WHERE owner = $1 AND id = $2`), owner, id).
			Scan(&createdAt, &metadata)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, convNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading conversation %s: %w", id, err)
	}
	return conversation(id, createdAt, metadata)
}

// Update implements [conversations.Store]. It may run twice (it sets the
// metadata).
func (s *ConversationStore) Update(ctx context.Context, owner, id string, metadata map[string]string) (*conversations.Conversation, error) {
	b, err := json.Marshal(metadata)
	if err != nil {
		return nil, fmt.Errorf("postgres: encoding conversation %s: %w", id, err)
	}
	var createdAt int64
	err = s.db.retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, s.db.q(`UPDATE gk_conversations SET metadata = $3 WHERE owner = $1 AND id = $2 RETURNING created_at`),
			owner, id, b).Scan(&createdAt)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, convNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: updating conversation %s: %w", id, err)
	}
	return conversation(id, createdAt, b)
}

// Delete implements [conversations.Store]: the conversation's items go
// with it (ON DELETE CASCADE).
func (s *ConversationStore) Delete(ctx context.Context, owner, id string) error {
	var tag pgconn.CommandTag
	// In a transaction: run again after a COMMIT whose answer was lost,
	// it would find nothing and say so.
	err := s.db.tx(ctx, false, func(tx pgx.Tx) (err error) {
		tag, err = tx.Exec(ctx, s.db.q(`DELETE FROM gk_conversations WHERE owner = $1 AND id = $2`), owner, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: deleting conversation %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return convNotFound(id)
	}
	return nil
}

// AppendItems implements [conversations.Store]: in one transaction, it
// numbers the items after the conversation's last (locking its row),
// checks that the conversation holds none of their ids, and inserts them.
// Run again after a COMMIT whose answer was lost, it would find its items
// there: it is tried again only when it certainly did not commit.
func (s *ConversationStore) AppendItems(ctx context.Context, owner, id string, items []responses.Item) error {
	if dup := sqlstore.DuplicateID(items); dup != "" {
		return &responses.DuplicateItemError{ID: dup}
	}
	ids, data, err := itemColumns(items)
	if err != nil {
		return fmt.Errorf("postgres: encoding the items of conversation %s: %w", id, err)
	}
	err = s.db.tx(ctx, false, func(tx pgx.Tx) error {
		var last int64
		err := tx.QueryRow(ctx, s.db.q(`UPDATE gk_conversations SET last_seq = last_seq + $3 WHERE owner = $1 AND id = $2 RETURNING last_seq`),
			owner, id, len(items)).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return convNotFound(id)
		}
		if err != nil || len(items) == 0 {
			return err
		}
		rows, err := tx.Query(ctx, s.db.q(`SELECT id FROM gk_conversation_items WHERE owner = $1 AND conversation_id = $2 AND id = ANY ($3)`),
			owner, id, ids)
		if err != nil {
			return err
		}
		held, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		// The first of the items that the conversation holds.
		if i := slices.IndexFunc(ids, func(id string) bool { return slices.Contains(held, id) }); i >= 0 {
			return &responses.DuplicateItemError{ID: ids[i]}
		}
		return s.insertItems(ctx, tx, owner, id, last-int64(len(items))+1, ids, data)
	})
	if err != nil && !sentinel(err) {
		return fmt.Errorf("postgres: adding items to conversation %s: %w", id, err)
	}
	return err
}

// read runs fn in a read-only REPEATABLE READ transaction, whose
// statements see one snapshot, and once more on a new connection if its
// connection was lost.
func (s *ConversationStore) read(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return s.db.retry(ctx, func() error {
		return pgx.BeginTxFunc(ctx, s.db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, fn)
	})
}

// exists returns ErrNotFound unless owner has conversation id.
func (s *ConversationStore) exists(ctx context.Context, tx pgx.Tx, owner, id string) error {
	var one int
	err := tx.QueryRow(ctx, s.db.q(`SELECT 1 FROM gk_conversations WHERE owner = $1 AND id = $2`), owner, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return convNotFound(id)
	}
	return err
}

// ConversationItems implements [conversations.Store]
// (responses.ConversationStore).
func (s *ConversationStore) ConversationItems(ctx context.Context, owner, id string, limit int) ([]responses.Item, error) {
	var items []responses.Item
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		if err := s.exists(ctx, tx, owner, id); err != nil {
			return err
		}
		items, err = queryItems(ctx, tx, s.db.q(`SELECT data FROM gk_conversation_items WHERE owner = $1 AND conversation_id = $2
			ORDER BY seq DESC LIMIT $3`), owner, id, limit)
		return err
	})
	if err != nil {
		return nil, wrapRead("reading the items of", id, err)
	}
	slices.Reverse(items)
	return items, nil
}

// queryItems returns the items of a query whose rows are data columns.
func queryItems(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]responses.Item, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	items := []responses.Item{}
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&data}, func() error {
		var it responses.Item
		if err := json.Unmarshal(data, &it); err != nil {
			return err
		}
		items = append(items, it)
		return nil
	})
	return items, err
}

// wrapRead wraps the error of a read of conversation id, but for the
// sentinels of the Store's contract.
func wrapRead(doing, id string, err error) error {
	if sentinel(err) {
		return err
	}
	return fmt.Errorf("postgres: %s conversation %s: %w", doing, id, err)
}

// ListItems implements [conversations.Store].
func (s *ConversationStore) ListItems(ctx context.Context, owner, id string, q conversations.ItemQuery) ([]responses.Item, bool, error) {
	limit := max(q.Limit, 1)
	var items []responses.Item
	err := s.read(ctx, func(tx pgx.Tx) (err error) {
		if err := s.exists(ctx, tx, owner, id); err != nil {
			return err
		}
		// after is a seq of the conversation; the page starts past it.
		after, cmp, order := sqlstore.ItemPage(q)
		if q.After != "" {
			err := tx.QueryRow(ctx, s.db.q(`SELECT seq FROM gk_conversation_items WHERE owner = $1 AND conversation_id = $2 AND id = $3`),
				owner, id, q.After).Scan(&after)
			if errors.Is(err, pgx.ErrNoRows) {
				return convItemNotFound(q.After)
			}
			if err != nil {
				return err
			}
		}
		items, err = queryItems(ctx, tx, s.db.q(`SELECT data FROM gk_conversation_items WHERE owner = $1 AND conversation_id = $2 AND seq `+cmp+` $3
			ORDER BY seq `+order+` LIMIT $4`), owner, id, after, limit+1)
		return err
	})
	if err != nil {
		return nil, false, wrapRead("listing the items of", id, err)
	}
	items, more := sqlstore.Page(items, limit)
	return items, more, nil
}

// GetItem implements [conversations.Store].
func (s *ConversationStore) GetItem(ctx context.Context, owner, id, itemID string) (*responses.Item, error) {
	// One statement: a conversation without the item gives a row whose
	// data is NULL; no conversation, no row.
	var data []byte
	err := s.db.retry(ctx, func() error {
		return s.db.pool.QueryRow(ctx, s.db.q(`SELECT i.data FROM gk_conversations c
			LEFT JOIN gk_conversation_items i ON i.owner = c.owner AND i.conversation_id = c.id AND i.id = $3
			WHERE c.owner = $1 AND c.id = $2`), owner, id, itemID).Scan(&data)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, convNotFound(id)
	case err != nil:
		return nil, fmt.Errorf("postgres: reading an item of conversation %s: %w", id, err)
	case data == nil:
		return nil, convItemNotFound(itemID)
	}
	var it responses.Item
	if err := json.Unmarshal(data, &it); err != nil {
		return nil, fmt.Errorf("postgres: decoding item %s of conversation %s: %w", itemID, id, err)
	}
	return &it, nil
}

// DeleteItem implements [conversations.Store]. Run again after a COMMIT
// whose answer was lost, it would find nothing: it is tried again only
// when it certainly did not commit.
func (s *ConversationStore) DeleteItem(ctx context.Context, owner, id, itemID string) (*conversations.Conversation, error) {
	var createdAt int64
	var metadata []byte
	err := s.db.tx(ctx, false, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, s.db.q(`SELECT created_at, metadata FROM gk_conversations WHERE owner = $1 AND id = $2`), owner, id).
			Scan(&createdAt, &metadata)
		if errors.Is(err, pgx.ErrNoRows) {
			return convNotFound(id)
		}
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, s.db.q(`DELETE FROM gk_conversation_items WHERE owner = $1 AND conversation_id = $2 AND id = $3`), owner, id, itemID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return convItemNotFound(itemID)
		}
		return nil
	})
	if err != nil {
		return nil, wrapRead("deleting an item of", id, err)
	}
	return conversation(id, createdAt, metadata)
}
