package chat

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/models"
)

// A Backend generates chat completions: the content of a reply. The
// handler owns the wire (ids, timestamps, object names, chunk framing,
// usage totals); a Backend only says what the model produced.
//
// Complete returns the whole reply of a request. The context is the
// request's: it is cancelled when the client goes away, and Complete
// should then return promptly. To send a client-facing error, return (or
// wrap) an *apierrors.Error; any other error is answered as a 500 whose
// text is only logged.
//
// The Result must hold exactly p.Request.Choices() outputs; the handler
// owns it once Complete returns (it fills in defaults). Backends must be
// safe for concurrent use, and must not modify p.Request.
type Backend interface {
	Complete(ctx context.Context, p *Params) (*Result, error)
}

// A StreamingBackend is a [Backend] that also streams. The handler uses
// Stream for requests with "stream": true when the backend implements it,
// and otherwise streams the Result of Complete in a few chunks.
//
// Stream returns an iterator over the reply's increments, in order. The
// handler ranges over it in a goroutine of its own, a few deltas ahead of
// the client, and writes the chunks of each [Delta] as it arrives; it
// copies what it keeps of a Delta (its ToolCalls, its Usage) before yield
// returns, so an iterator may reuse them. When the client goes away, ctx
// is cancelled and the loop stops (yield returns false), so the iterator
// must return as soon as yield returns false or ctx is done; the handler
// waits for it to return. To fail, yield a zero
// Delta with the error and return: before anything was sent, the client
// gets a JSON error with a real status; afterwards, an error event (see
// the package documentation).
type StreamingBackend interface {
	Backend
	Stream(ctx context.Context, p *Params) iter.Seq2[Delta, error]
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model (for example, [models.Model]
// Reasoning marks a model whose replies carry reasoning). They are shared
// with the handler: read them, do not modify them.
type Params struct {
	Request *Request
	Model   *models.Model

	body []byte // the request body as the client sent it (see internal/passthrough)
}

// Result is a backend's whole reply.
type Result struct {
	// Choices holds one output per requested choice, in order.
	Choices []Output
	// Usage is the reply's usage; the handler sets TotalTokens to
	// PromptTokens + CompletionTokens.
	Usage Usage
	// Model is the model that answered, sent as "model"; empty means the
	// request's.
	Model string
}

// Output is one choice of a [Result].
type Output struct {
	// Content is the reply text. An output with ToolCalls and no Content
	// is sent with "content": null.
	Content string
	// Reasoning is sent as reasoning_content.
	Reasoning string
	// ToolCalls are the tools the model calls. An empty ID is replaced by
	// a random "call_…" id; an empty Type is "function".
	ToolCalls []ToolCall
	// FinishReason defaults to tool_calls when there are ToolCalls, and
	// to stop otherwise.
	FinishReason FinishReason
}

// Delta is one increment of a streamed reply.
//
// Each Delta belongs to the choice with index Choice (0-based, below
// p.Request.Choices()). Its content, reasoning and tool-call fragments
// become one chunk, and its FinishReason one more (the finish reason
// always comes in a chunk of its own, with an empty delta). Deltas of
// different choices may interleave. The first chunk of each choice gets
// role "assistant"; a Delta with no fields set for a choice that has not
// started yet sends just that role chunk, and is otherwise ignored.
// FinishReason ends the choice: no delta may follow for it. Choices that
// the stream leaves unfinished get a final chunk with finish_reason
// tool_calls (if they called tools) or stop.
//
// Usage reports the reply's usage; the last one reported counts. A Delta
// with only Usage set belongs to no choice, and sends nothing by itself:
// the usage is sent in the final chunk when the client asked for it
// (stream_options.include_usage), and charged to the API key in any case.
//
// The handler decides when the chunks go out: it writes a Delta's
// chunks at once, and flushes them unless the next Delta is already at
// hand (the iterator runs ahead of the client by a few deltas), so a
// backend never says when to flush.
type Delta struct {
	Choice       int
	Content      string
	Reasoning    string
	ToolCalls    []ToolCallDelta
	FinishReason FinishReason
	Usage        *Usage
}

// ToolCallDelta is a fragment of a streamed tool call.
//
// Index is the call's position in its choice: 0 for the first call, and
// each new call takes the next index. The first fragment of a call must
// carry Name; its ID may be empty, and is then replaced by a random
// "call_…" id. Later fragments carry the same Index and a piece of the
// arguments (their ID and Name are ignored).
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

func (d *Delta) empty() bool {
	return d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 && d.FinishReason == ""
}
