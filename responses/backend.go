package responses

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// A Backend generates responses: the content of a reply. The handler owns
// the wire (ids, timestamps, object names, the event lifecycle, usage
// totals) and the conversation store; a Backend only says what the model
// produced, from the [Params] it is given, and never needs the [Store].
//
// Complete returns the whole reply of a request. The context is the
// request's: it is cancelled when the client goes away, and Complete
// should then return promptly. To send a client-facing error, return (or
// wrap) an *apierrors.Error; any other error is answered as a 500 whose
// text is only logged.
//
// The handler owns the Result once Complete returns. Backends must be
// safe for concurrent use, and must not modify the Params.
type Backend interface {
	Complete(ctx context.Context, p *Params) (*Result, error)
}

// A StreamingBackend is a [Backend] that also streams. The handler uses
// Stream for requests with "stream": true when the backend implements it,
// and otherwise streams the Result of Complete.
//
// Stream returns an iterator over the reply's increments ([Delta]), in
// order, under the contract of every streaming backend of the kit (see
// Streams in package [endpoint], and [Params.Flush]): an iterator may reuse what a Delta
// points to (its Call, its Usage) once yield returns, and an error after
// the first event ends the stream with a response.failed event.
type StreamingBackend interface {
	Backend
	Stream(ctx context.Context, p *Params) iter.Seq2[Delta, error]
}

// A Compactor is a [Backend] that also compacts conversations, for POST
// /v1/responses/compact. A backend that is not a Compactor answers that
// route with a 400 invalid_request_error, param "model": the model
// cannot compact.
//
// Compact summarises the conversation of p (p.History, then the request's
// input) into an opaque EncryptedContent that the same backend
// understands when a later request sends it back in a compaction input
// item. The handler builds the rest of the reply (the user messages, ids,
// usage totals). Errors are as for Complete.
type Compactor interface {
	Backend
	Compact(ctx context.Context, p *CompactParams) (*CompactResult, error)
}

// Params is what a [Backend] is asked: the decoded and validated request,
// the catalogue entry of its model, and the conversation that the request
// continues. They are shared with the handler: read them, do not modify
// them. A backend that asks another with a different request gives it a
// copy with that request (q := *p; q.Request = req), which keeps its
// Flush and has no Body.
type Params struct {
	Request *Request
	Model   *models.Model
	// History is the conversation before the request's input, oldest
	// first, resolved from the store through previous_response_id: for
	// each earlier response of the chain, its input items, then its output
	// items (messages of role assistant with output_text parts, and
	// function_call items); or, for a request that names a conversation,
	// the conversation's items. It is empty without either. As in
	// OpenAI's API, the instructions of earlier responses are not part of
	// it.
	History []Item

	src        pipeline.Source[Request] // the client's body and the stream's flush
	background bool
}

// InBackground reports whether the handler asks for this reply on a
// worker of its [Background] ("background": true): no client waits on
// the backend, which is asked in the foreground (the Request's
// Background is nil, and there is no Body), whatever it is.
func (p *Params) InBackground() bool { return p.background }

// Body returns the request body as the client sent it: the JSON that
// p.Request was decoded from. It is nil when the Params were built in
// code, and in a copy of the Params whose Request was replaced, so it
// never describes another request than p.Request. A relay sends it
// upstream (with edits of its own: the model's name, the conversation
// as input), so that every member the client sent reaches the upstream,
// those that [Request] does not model included; with a nil Body it
// encodes p.Request. The bytes are shared: do not modify them.
func (p *Params) Body() []byte { return p.src.Body(p.Request) }

// Flush says that the stream is about to wait for its source (the next
// read of an upstream's reply, a pause of its own): the handler sends
// the client what the stream has yielded so far, in one write. The
// contract is that of every streaming backend of the kit: see Streams in
// package [endpoint]. A stream that has its whole reply at hand calls
// Flush once, first ([Deltas] does). Flush does nothing outside a
// streamed reply, or in Params built in code without [Params.SetFlush].
func (p *Params) Flush() { p.src.Flush() }

// SetFlush sets the function that [Params.Flush] calls; nil removes it.
// The handler sets its stream's flush before it asks for the stream; a
// backend that asks another with new Params (a chat backend's, say)
// passes its own Flush on, so that the stream it asks for keeps its
// pace. A copy of the Params keeps the function.
func (p *Params) SetFlush(flush func()) { p.src.SetFlush(flush) }

// Items returns the whole conversation the backend answers: History, then
// the request's input ([Input.AsItems]). It returns a new slice, except
// that with no History it returns the input's items themselves.
func (p *Params) Items() []Item {
	in := p.Request.Input.AsItems()
	if len(p.History) == 0 {
		return in
	}
	all := make([]Item, 0, len(p.History)+len(in))
	return append(append(all, p.History...), in...)
}

// Result is a backend's whole reply.
type Result struct {
	// Output holds the output items, in order.
	Output []Output
	// Usage is the reply's usage; the handler sets TotalTokens to
	// InputTokens + OutputTokens.
	Usage Usage
	// Model is the model that answered, sent as "model"; empty means the
	// request's.
	Model string
	// Incomplete, when set, makes the response incomplete, with this
	// reason (for example [ReasonMaxOutputTokens]); otherwise it is
	// completed.
	Incomplete string
}

// Output is one output item of a [Result]: a function call if Call is
// set; else a reasoning item whose summary is Reasoning, if it or
// EncryptedContent is set (Text must then be empty); and otherwise an
// assistant message whose text is Text. Reasoning models put their
// reasoning item first.
//
// EncryptedContent is a reasoning item's encrypted_content: the
// reasoning as an opaque value that only the backend that made it reads,
// which a client that keeps no state (store: false) sends back in its
// next input. ID, for a reasoning item only, is its id as the backend
// made it, which its encrypted content goes back with; empty, the
// item gets a new id of the gateway's.
type Output struct {
	Text             string
	Call             *FunctionCall
	Reasoning        string
	EncryptedContent string
	ID               string
}

// FunctionCall is a call of a function tool. An empty CallID is replaced
// by a random "call_…" id. Arguments is a JSON string.
type FunctionCall struct {
	CallID    string
	Name      string
	Arguments string
}

// Delta is one increment of a streamed reply.
//
// Each Delta belongs to the output item with index Item (0-based). Items
// come in order: a Delta either continues the current item or begins the
// next one (Item one above the current), which ends the current one. The
// first Delta of an item says what it is: a function call if Call is set
// (Call.Name is required; an empty Call.CallID is replaced by a random
// "call_…" id; Call.Arguments may hold the start of the arguments), a
// reasoning item if Reasoning or EncryptedContent is set (with ID, if
// set, as its id: see [Output]), and otherwise a message. Later
// Deltas of the item carry pieces of its text (Text, for a message), of
// its arguments (Arguments, for a function call) or of its reasoning
// summary (Reasoning); Call and ID are then ignored. EncryptedContent on
// a later Delta of a reasoning item sets its encrypted content (the last
// one given counts); on another item it is an error.
//
// Usage reports the reply's usage and Incomplete makes the response
// incomplete with that reason; for both, the last one reported counts. A
// Delta with only these set belongs to no item. The response ends when the
// iterator returns: the open item is closed and the terminal event
// (response.completed or response.incomplete) carries the usage.
//
// The handler writes a Delta's events at once, and flushes them after
// it, unless the stream has called [Params.Flush], which says when.
type Delta struct {
	Item             int
	Text             string
	Call             *FunctionCall
	Arguments        string
	Reasoning        string
	EncryptedContent string
	ID               string
	Usage            *Usage
	Incomplete       string
}

// CompactParams is what a [Compactor] is asked: the decoded and validated
// compact request, the catalogue entry of its model, and the conversation
// of its previous_response_id, resolved as for [Params.History]. Read
// them, do not modify them.
type CompactParams struct {
	Request *CompactRequest
	Model   *models.Model
	History []Item
}

// Items returns the whole conversation to compact: History, then the
// request's input.
func (p *CompactParams) Items() []Item {
	in := p.Request.Input.AsItems()
	if len(p.History) == 0 {
		return in
	}
	all := make([]Item, 0, len(p.History)+len(in))
	return append(append(all, p.History...), in...)
}

// CompactResult is a compactor's reply: the opaque content of the
// compaction item, and the usage of the compaction pass (the handler sets
// TotalTokens).
type CompactResult struct {
	EncryptedContent string
	Usage            Usage
}
