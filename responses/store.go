package responses

import (
	"context"
	"errors"
)

// ErrNotFound is the error of [Store.Get] and [Store.Delete] for a
// response that is not stored, or belongs to another owner.
// Implementations may wrap it; compare with errors.Is.
var ErrNotFound = errors.New("responses: response not found")

// A Store keeps responses, for GET and DELETE /v1/responses/{id} and for
// the conversations of previous_response_id. Implementations must be safe
// for concurrent use. The conformance suite responsestest.TestStore
// checks this contract.
//
// A stored response is visible only to its owner: Get and Delete of
// another owner's response return ErrNotFound, as for one that does not
// exist. Records are immutable once stored: the handler never modifies a
// *StoredResponse after Put nor one returned by Get, so a store may keep
// and return the same value (the in-memory store does).
type Store interface {
	// Put stores r under r.Response.ID, replacing a record with that id of
	// the same owner. r.Owner may be empty (see [WithOwner]); an empty
	// id is an error.
	Put(ctx context.Context, r *StoredResponse) error
	// Get returns owner's response with the given id, or an error
	// wrapping ErrNotFound.
	Get(ctx context.Context, owner, id string) (*StoredResponse, error)
	// Delete removes owner's response with the given id, or returns an
	// error wrapping ErrNotFound.
	Delete(ctx context.Context, owner, id string) error
}

// StoredResponse is what a [Store] keeps of one response: its owner, the
// response object as sent, and the input items of its request (string
// input as one user message), which the conversations of
// previous_response_id replay.
type StoredResponse struct {
	Owner    string
	Response Response
	Input    []Item
}
