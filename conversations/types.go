package conversations

import (
	"github.com/gatewaykit/gatewaykit/responses"
)

// The object names of the replies.
const (
	// ObjectConversation is the "object" of a [Conversation].
	ObjectConversation = "conversation"
	// ObjectDeleted is the "object" of a [DeletedConversation].
	ObjectDeleted = "conversation.deleted"
	// ObjectList is the "object" of an [ItemList].
	ObjectList = "list"
)

// IDPrefix begins the id of every conversation: "conv_" and 26 base32
// characters (128 random bits).
const IDPrefix = "conv_"

// Limits of the requests, as OpenAI's API sets them.
const (
	// MaxItemsPerRequest is the most items that a create request, or a
	// request that adds items, may carry.
	MaxItemsPerRequest = 20
	// DefaultListLimit is the number of items a list request answers
	// unless it gives a limit; MaxListLimit the most it may ask for.
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// Conversation is the conversation object: the reply of POST
// /v1/conversations, of GET and POST /v1/conversations/{id}, and of
// DELETE /v1/conversations/{id}/items/{item_id}. Metadata is {} when
// there is none. Its items are kept apart ([Store]).
type Conversation struct {
	ID        string            `json:"id"`
	Object    string            `json:"object"`
	CreatedAt int64             `json:"created_at"` // Unix seconds
	Metadata  map[string]string `json:"metadata"`
}

// DeletedConversation is the reply of DELETE /v1/conversations/{id}.
type DeletedConversation struct {
	ID      string `json:"id"`
	Object  string `json:"object"` // "conversation.deleted"
	Deleted bool   `json:"deleted"`
}

// ItemList is a list of a conversation's items: the reply of GET
// /v1/conversations/{id}/items (a page of the items, HasMore when more
// follow in that order) and of POST /v1/conversations/{id}/items (the
// items added, HasMore false). FirstID and LastID are the ids of the
// first and last items of Data, "" when it is empty.
type ItemList struct {
	Object  string           `json:"object"` // "list"
	Data    []responses.Item `json:"data"`
	FirstID string           `json:"first_id"`
	LastID  string           `json:"last_id"`
	HasMore bool             `json:"has_more"`
}

// CreateRequest is the body of POST /v1/conversations: the first items
// of the conversation (at most [MaxItemsPerRequest]) and its metadata
// (at most 16 pairs, keys of at most 64 characters, values of at most
// 512). Both may be absent. Members it does not model are ignored.
type CreateRequest struct {
	Items    []responses.Item  `json:"items,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// UpdateRequest is the body of POST /v1/conversations/{id}: the
// conversation's new metadata, which replaces the old ({} removes it). It
// is required: absent or null (a nil map once decoded) is a 400.
type UpdateRequest struct {
	Metadata map[string]string `json:"metadata"`
}

// AddItemsRequest is the body of POST /v1/conversations/{id}/items: the
// items to add, from 1 to [MaxItemsPerRequest].
type AddItemsRequest struct {
	Items []responses.Item `json:"items"`
}
