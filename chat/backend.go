package chat

import (
	"context"
	"iter"
	"slices"

	"github.com/gatewaykit/gatewaykit/internal/pipeline"
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
// Stream returns an iterator over the reply's increments ([Delta]), in
// order, under the contract of every streaming backend of the kit (see
// Streams in package [endpoint], and [Params.Flush]): an iterator may reuse what a Delta
// points to (its ToolCalls, its Usage) once yield returns, and an error
// after the first chunk ends the stream with an error event (see the
// package documentation).
type StreamingBackend interface {
	Backend
	Stream(ctx context.Context, p *Params) iter.Seq2[Delta, error]
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model (for example, [models.Model]
// Reasoning marks a model whose replies carry reasoning). They are shared
// with the handler: read them, do not modify them. A backend that asks
// another with a different request gives it a copy with that request
// (q := *p; q.Request = req), which keeps its Flush and has no Body.
type Params struct {
	Request *Request
	Model   *models.Model

	src pipeline.Source[Request] // the client's body and the stream's flush
}

// Body returns the request body as the client sent it: the JSON that
// p.Request was decoded from. It is nil when the Params were built in
// code (by package messages or gemini, say), and in a copy of the Params
// whose Request was replaced, so it never describes another request than
// p.Request. A relay sends it upstream (with edits of its own, such as
// the model's name), so that every member the client sent reaches the
// upstream, those that [Request] does not model included; with a nil
// Body it encodes p.Request. The bytes are shared: do not modify them.
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
// The handler sets its stream's flush before it asks for the stream. A
// handler of another format that asks a chat backend with Params of its
// own (messages, Gemini), or a backend that asks another with new
// Params, passes its own Flush on, so that the stream it asks for keeps
// its pace: q.SetFlush(p.Flush). A copy of the Params keeps the
// function.
func (p *Params) SetFlush(flush func()) { p.src.SetFlush(flush) }

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

	reply []byte   // the upstream's reply; see SetReply
	said  []Output // the Choices when reply was set
}

// SetReply gives r the reply as an upstream encoded it: a JSON object of
// the members of a chat.completion other than id, object, created, model
// and usage. The handler then writes its own id, object, created and
// model, the members of reply as they are, and the usage of r, so that
// the members the kit does not model (system_fingerprint, logprobs, …)
// reach the client. The backend vouches that reply holds r.Choices, in
// order, as the package documentation describes a reply's choices. The
// relay's backend sets it on the replies of OpenAI-compatible upstreams.
//
// SetReply records r.Choices as they are (their content, reasoning, tool
// calls and finish reasons): if anything changes them afterwards (a
// wrapper that redacts the content, say), the handler encodes r itself
// and drops reply, so that the client never gets a reply that r no
// longer describes. A nil reply removes it. SetReply keeps reply, which
// must not change afterwards.
func (r *Result) SetReply(reply []byte) {
	r.reply = reply
	r.said = append(r.said[:0], r.Choices...)
	for i := range r.said {
		r.said[i].ToolCalls = slices.Clone(r.said[i].ToolCalls)
	}
}

// upstreamReply returns the reply of SetReply, if r.Choices still say
// what they said then, and nil otherwise.
func (r *Result) upstreamReply() []byte {
	if r.reply == nil || len(r.said) != len(r.Choices) {
		return nil
	}
	for i := range r.Choices {
		a, b := &r.Choices[i], &r.said[i]
		if a.Content != b.Content || a.Reasoning != b.Reasoning || a.FinishReason != b.FinishReason || !slices.Equal(a.ToolCalls, b.ToolCalls) {
			return nil
		}
	}
	return r.reply
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
// The handler writes a Delta's chunks at once, and flushes them after
// it, unless the stream has called [Params.Flush], which says when.
//
// A Delta may carry the chunk that an upstream encoded it in, which the
// handler then sends in place of its own encoding: see [Delta.SetChunk].
type Delta struct {
	Choice       int
	Content      string
	Reasoning    string
	ToolCalls    []ToolCallDelta
	FinishReason FinishReason
	Usage        *Usage

	chunk []byte // the upstream's chunk; see SetChunk
	said  said   // what the Delta said when chunk was set
}

// said is what a Delta says, as far as a chunk encodes it.
type said struct {
	choice             int
	content, reasoning string
	finish             FinishReason
}

// SetChunk gives d the chunk that an upstream encoded it in: a JSON
// object of the members of a chat.completion.chunk other than id, object,
// created, model and usage, with the one choice of d. The handler writes
// its own id, object, created and model, then the members of chunk as
// they are, in place of its own encoding of d, so that the members the
// kit does not model (system_fingerprint, logprobs, …) reach the client;
// the usage stays the handler's (d.Usage, sent in the usage chunk). The
// backend vouches that chunk describes d as the package documentation
// describes chunks: the role "assistant" in the first chunk of a choice,
// a finish reason in a chunk with an empty delta. The relay's backend
// sets the chunks of OpenAI-compatible upstreams.
//
// SetChunk records what d says: its choice, content, reasoning and
// finish reason. A delta that says something else by the time the
// handler writes it (a wrapper changed its content, say) is encoded by
// the handler and the chunk dropped, so that the client never gets a
// chunk that the delta no longer describes; so is a delta with tool
// calls, whose ids and types the handler fills in. A copy of d keeps the
// chunk; a nil chunk removes it. The chunk's memory is the backend's, as
// the rest of the delta's: it may be reused once yield returns.
func (d *Delta) SetChunk(chunk []byte) {
	d.chunk = chunk
	d.said = said{choice: d.Choice, content: d.Content, reasoning: d.Reasoning, finish: d.FinishReason}
}

// upstreamChunk returns the chunk of SetChunk, if d still says what it
// said then and calls no tools, and nil otherwise.
func (d *Delta) upstreamChunk() []byte {
	s := &d.said
	if d.chunk == nil || len(d.ToolCalls) > 0 || s.choice != d.Choice || !pipeline.Same(s.content, d.Content) ||
		!pipeline.Same(s.reasoning, d.Reasoning) || !pipeline.Same(string(s.finish), string(d.FinishReason)) {
		return nil
	}
	return d.chunk
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
