package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// ErrConversationNotFound is the error of a [ConversationStore] for a
// conversation that does not exist, or belongs to another owner.
// Implementations may wrap it; compare with errors.Is.
var ErrConversationNotFound = errors.New("responses: conversation not found")

// A DuplicateItemError is the error of [ConversationStore.AppendItems]
// for an item whose id the conversation holds already (or that two of the
// items share): none of the items was added. Find it with errors.As.
type DuplicateItemError struct {
	ID string // the id held twice
}

func (e *DuplicateItemError) Error() string {
	return "responses: the conversation already holds an item with id " + strconv.Quote(e.ID)
}

// MaxConversationItems is the most items of a conversation that a request
// naming it hands its backend: the newest ones, in [Params] History.
const MaxConversationItems = 10000

// A ConversationStore keeps the conversations that the "conversation"
// member of a request names ([WithConversations]): package conversations'
// Store is one, which its handler serves on /v1/conversations. A
// conversation belongs to an owner (see [WithOwner]); to any other it
// does not exist. Implementations must be safe for concurrent use.
type ConversationStore interface {
	// ConversationItems returns the newest items of owner's conversation
	// id, at most limit of them, oldest first, or an error wrapping
	// ErrConversationNotFound. The handler does not modify them.
	ConversationItems(ctx context.Context, owner, id string, limit int) ([]Item, error)
	// AppendItems adds items, each with an id, at the end of owner's
	// conversation id, all of them or none: it returns an error wrapping
	// ErrConversationNotFound, or a *DuplicateItemError when an item's id
	// is in the conversation already or held by two of the items.
	AppendItems(ctx context.Context, owner, id string, items []Item) error
}

// conversationHistory returns the items of owner's conversation that req
// names (see [ConversationStore.ConversationItems]) and the estimated
// tokens of their text. An unknown (or foreign) conversation is a 404
// not_found with param "conversation", as OpenAI answers it; an input
// item whose id the conversation holds already, or that another input
// item has, is a 400 naming it, as OpenAI refuses duplicate items.
func (h *handler) conversationHistory(ctx context.Context, owner string, req *Request) ([]Item, int64, error) {
	id := req.Conversation.ID
	var items []Item
	err := ErrConversationNotFound
	if h.cfg.conversations != nil {
		items, err = h.cfg.conversations.ConversationItems(ctx, owner, id, MaxConversationItems)
	}
	switch {
	case errors.Is(err, ErrConversationNotFound):
		return nil, 0, conversationNotFound(id).WithCause(err)
	case err != nil:
		return nil, 0, storeError(ctx, err)
	}
	held := make(map[string]bool, len(items))
	var size int64
	for i := range items {
		held[items[i].ID] = true
		size += itemSize(&items[i])
	}
	for i, it := range req.Input.Items {
		if it.ID == "" {
			continue
		}
		if held[it.ID] {
			return nil, 0, duplicateItem("input["+strconv.Itoa(i)+"].id", it.ID)
		}
		held[it.ID] = true
	}
	return items, (size + 3) / 4, nil // as pipeline.PromptTokens counts bytes
}

// conversationNotFound is the error of a conversation that the request's
// owner has not: 404 not_found, param "conversation".
func conversationNotFound(id string) *apierrors.Error {
	return apierrors.NotFound("Conversation with id " + apierrors.Quote(id) + " not found.").WithParam("conversation")
}

// duplicateItem is the error of an item whose id is held already: a 400
// with OpenAI's message.
func duplicateItem(param, id string) *apierrors.Error {
	return apierrors.InvalidRequestf(param, "Duplicate item found with id %s. Remove duplicate items from your input and try again.", apierrors.Quote(id))
}

// appendToConversation adds the stored input items and the output items
// of resp to the conversation of req. If the store fails, it returns the
// error to send instead of the response (see notAppended).
func (h *handler) appendToConversation(ctx context.Context, owner string, req *Request, input []Item, resp *Response) error {
	id := req.Conversation.ID
	items := make([]Item, 0, len(input)+len(resp.Output))
	items = append(items, input...)
	for i := range resp.Output {
		items = append(items, conversationItem(&resp.Output[i]))
	}
	var err error = ErrConversationNotFound
	if h.cfg.conversations != nil {
		err = h.cfg.conversations.AppendItems(ctx, owner, id, items)
	}
	if err != nil {
		return notAppended(resp.ID, id, err)
	}
	return nil
}

// conversationItem is an output item as a conversation keeps it: the
// item that the backends see (historyItem), with the annotations of its
// output_text parts, as OpenAI lists a conversation's items.
func conversationItem(o *OutputItem) Item {
	it := historyItem(o)
	for i := range it.Content.Parts {
		it.Content.Parts[i].Extra = map[string]json.RawMessage{"annotations": json.RawMessage("[]")}
	}
	return it
}

// notAppended is the error of a response that was generated (and is
// charged) but whose items the conversation store failed to add (the
// conversation was deleted meanwhile, its store cannot be reached): a
// 500 internal_server_error that says so, with "X-Should-Retry: false",
// as for a response that could not be stored (notStored).
func notAppended(id, conversation string, cause error) *apierrors.Error {
	e := apierrors.New(apierrors.CodeInternal, "The response was generated and charged, but it could not be added to conversation "+
		apierrors.Quote(conversation)+": the conversation does not hold it. Sending the request again generates and charges a new response.").
		WithCause(fmt.Errorf("responses: adding response %s to conversation %s: %w", id, conversation, cause))
	e.Header = http.Header{"X-Should-Retry": {"false"}}
	return e
}
