package completions

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/models"
)

// A Backend generates legacy completions: the content of a reply. The
// handler owns the wire (ids, timestamps, object names, chunk framing,
// usage totals); a Backend only says what the model produced.
//
// Complete returns the whole reply of a request. The context is the
// request's: it is cancelled when the client goes away, and Complete
// should then return promptly. To send a client-facing error, return (or
// wrap) an *apierrors.Error; any other error is answered as a 500 whose
// text is only logged.
//
// The Result must hold exactly p.Request.Choices() outputs: N for each
// prompt, those of prompt i at indexes i*N to i*N+N-1. The handler owns
// the Result once Complete returns. Backends must be safe for concurrent
// use, and must not modify p.Request.
type Backend interface {
	Complete(ctx context.Context, p *Params) (*Result, error)
}

// A StreamingBackend is a [Backend] that also streams. The handler uses
// Stream for requests with "stream": true when the backend implements it,
// and otherwise streams the Result of Complete, one chunk per choice.
//
// Stream returns an iterator over the reply's increments, in order. The
// handler ranges over it in the request's goroutine and writes one chunk
// per [Delta] as it arrives; it does not keep a Delta after yield
// returns. When the client goes away, ctx is cancelled and the loop stops
// (yield returns false), so the iterator must return as soon as yield
// returns false or ctx is done. To fail, yield a zero Delta with the
// error and return: before anything was sent, the client gets a JSON
// error with a real status; afterwards, an error event.
type StreamingBackend interface {
	Backend
	Stream(ctx context.Context, p *Params) iter.Seq2[Delta, error]
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model. They are shared with the handler:
// read them, do not modify them.
type Params struct {
	Request *Request
	Model   *models.Model
	// Body is the request body as the client sent it, which the handler
	// decoded into Request; nil when the Params were made another way. A
	// relay forwards it, with only the members it must change rewritten,
	// so that every field reaches the upstream exactly as it was sent.
	Body []byte
}

// Result is a backend's whole reply.
type Result struct {
	// Choices holds one output per choice, in order.
	Choices []Output
	// Usage is the reply's usage; the handler sets TotalTokens to
	// PromptTokens + CompletionTokens.
	Usage endpoint.Usage
	// Model is the model that answered, sent as "model"; empty means the
	// request's.
	Model string
	// Raw, when set, is the reply as the backend already has it encoded:
	// a relay passes an upstream's reply through this way (logprobs
	// included). It is a JSON object of the reply's members other than
	// id, object, created, model and usage, which the handler writes
	// itself (the usage from Usage); Raw's members are sent as they are,
	// between them. The backend vouches for Raw (valid JSON, the choices
	// in the shape of the API), and Choices must still describe it, as
	// the handler checks their number and charges Usage.
	Raw []byte
}

// Output is one choice of a [Result]. FinishReason defaults to stop.
type Output struct {
	Text         string
	FinishReason endpoint.FinishReason
}

// Delta is one increment of a streamed reply: a fragment of the text of
// the choice with index Choice. Deltas of different choices may
// interleave. FinishReason ends the choice: no delta may follow for it.
// Choices that the stream leaves unfinished get a final chunk with
// finish_reason stop.
//
// Usage reports the reply's usage; the last one reported counts. A Delta
// with only Usage set belongs to no choice and sends nothing by itself:
// the usage is sent in a final chunk when the client asked for it
// (stream_options.include_usage), and charged to the API key in any case.
type Delta struct {
	Choice       int
	Text         string
	FinishReason endpoint.FinishReason
	Usage        *endpoint.Usage
	// More hints that the next Delta is already at hand: the handler may
	// then write this one's chunks without flushing them, and flush them
	// with the next one's, so that a burst of deltas costs one write to
	// the client instead of one each. It is a hint, never required: the
	// handler flushes after every Delta without More, and at the end of
	// the stream (on the last Delta, More says that the end follows at
	// once). Set it only when the next Delta, or the end, follows without
	// waiting (it is buffered, or made from data at hand); otherwise the
	// client gets this one late.
	More bool
	// Raw, when set, is the delta's chunk as the backend already has it
	// encoded: a relay passes an upstream's chunks through this way
	// (logprobs included). It is a JSON object of the chunk's members
	// other than id, object, created and model (a legacy chunk has
	// none), which the handler writes first, with its own values; Raw's
	// members follow them as they are. The backend vouches for Raw:
	// valid JSON, one choice (Choice), no "usage" and no "error" member.
	// Choice and FinishReason must still describe it (the handler ends
	// the choice on its finish reason), and Usage is taken as usual. The
	// handler does not keep Raw after yield returns.
	Raw []byte
}

func (d *Delta) empty() bool { return d.Text == "" && d.FinishReason == "" && d.Raw == nil }
