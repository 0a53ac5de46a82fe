package conversations

import (
	"context"
	"errors"

	"github.com/gatewaykit/gatewaykit/responses"
)

// ErrNotFound is the error of a [Store] for a conversation that does not
// exist, or belongs to another owner. It is
// [responses.ErrConversationNotFound], so that the responses handler
// recognises it too. Implementations may wrap it; compare with errors.Is.
var ErrNotFound = responses.ErrConversationNotFound

// ErrItemNotFound is the error of a [Store] for an item that the
// conversation does not hold. Implementations may wrap it; compare with
// errors.Is.
var ErrItemNotFound = errors.New("conversations: item not found")

// The orders of [ItemQuery]: the order in which the items were added,
// or the reverse (the default of the list route).
const (
	OrderAsc  = "asc"
	OrderDesc = "desc"
)

// ItemQuery asks [Store.ListItems] for a page of items.
type ItemQuery struct {
	// Limit is the most items answered; it is at least 1.
	Limit int
	// Order is OrderAsc (oldest first) or OrderDesc (newest first).
	Order string
	// After, when set, is the id of an item of the conversation: the
	// page holds the items that come after it in Order.
	After string
}

// A Store keeps conversations and their items, for the handler of this
// package and for the "conversation" member of POST /v1/responses
// (responses.WithConversations; a Store is a
// [responses.ConversationStore]). Implementations must be safe for
// concurrent use. The conformance suite conversationstest.TestStore
// checks this contract.
//
// A conversation belongs to the owner given when it was created
// (auth.OwnerFunc; "" is an owner like any other): to every other owner
// it does not exist, and each method answers ErrNotFound for it. Its
// items keep the order in which they were added, and their ids are
// unique within it: [responses.StoredItems] gives them ids, and the
// handlers add no item whose id the conversation holds. Methods that add
// items add all of them or none. The handlers never modify a value they
// pass to a Store or get from one, so a store may keep and return the
// same values (the in-memory store does).
type Store interface {
	responses.ConversationStore

	// Create stores a new conversation of owner, c (ID, Object, CreatedAt
	// and a non-nil Metadata set), with its first items, in order. It
	// returns a *responses.DuplicateItemError, and stores nothing, when
	// two items share an id, and an error when owner has a conversation
	// c.ID already.
	Create(ctx context.Context, owner string, c *Conversation, items []responses.Item) error
	// Get returns owner's conversation id.
	Get(ctx context.Context, owner, id string) (*Conversation, error)
	// Update replaces the metadata of owner's conversation id (a non-nil
	// map, possibly empty) and returns the conversation as updated.
	Update(ctx context.Context, owner, id string, metadata map[string]string) (*Conversation, error)
	// Delete removes owner's conversation id and its items.
	Delete(ctx context.Context, owner, id string) error
	// ListItems returns a page of the items of owner's conversation id,
	// as q asks, and whether more items follow the page in q.Order. An
	// After that names no item of the conversation is an error wrapping
	// ErrItemNotFound.
	ListItems(ctx context.Context, owner, id string, q ItemQuery) (items []responses.Item, more bool, err error)
	// GetItem returns the item itemID of owner's conversation id, or an
	// error wrapping ErrItemNotFound.
	GetItem(ctx context.Context, owner, id, itemID string) (*responses.Item, error)
	// DeleteItem removes the item itemID of owner's conversation id (an
	// error wrapping ErrItemNotFound when it holds none) and returns the
	// conversation.
	DeleteItem(ctx context.Context, owner, id, itemID string) (*Conversation, error)
}
