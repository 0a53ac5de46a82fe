package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/http"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/sse"
)

// The types of the stream events, sent both as the SSE event name and as
// the "type" member of the data.
const (
	EventCreated                = "response.created"
	EventInProgress             = "response.in_progress"
	EventOutputItemAdded        = "response.output_item.added"
	EventContentPartAdded       = "response.content_part.added"
	EventOutputTextDelta        = "response.output_text.delta"
	EventOutputTextDone         = "response.output_text.done"
	EventContentPartDone        = "response.content_part.done"
	EventFunctionArgumentsDelta = "response.function_call_arguments.delta"
	EventFunctionArgumentsDone  = "response.function_call_arguments.done"
	EventOutputItemDone         = "response.output_item.done"
	EventReasoningPartAdded     = "response.reasoning_summary_part.added"
	EventReasoningTextDelta     = "response.reasoning_summary_text.delta"
	EventReasoningTextDone      = "response.reasoning_summary_text.done"
	EventReasoningPartDone      = "response.reasoning_summary_part.done"
	EventCompleted              = "response.completed"
	EventIncomplete             = "response.incomplete"
	EventFailed                 = "response.failed"
)

// ResponseEvent is the data of the lifecycle events that carry the whole
// response: created, in_progress, completed, incomplete and failed.
type ResponseEvent struct {
	Type           string    `json:"type"`
	SequenceNumber int       `json:"sequence_number"`
	Response       *Response `json:"response"`
}

// Deltas returns the backend's stream of c (see [Deltas]), whose
// Params.Flush is flush.
func (h *creator) Deltas(ctx context.Context, c *createCall, flush func()) iter.Seq2[Delta, error] {
	c.p.SetFlush(flush)
	return Deltas(ctx, h.answer, c.p)
}

// NewStream returns the event writer of the stream of c: the lifecycle
// events of the backend's deltas, ending with exactly one of
// response.completed, response.incomplete and response.failed. The
// response is stored as it ended, unless the client went away first,
// before its terminal event is sent: a response that the store fails to
// keep ends with response.failed (see notStored), never
// response.completed.
func (h *creator) NewStream(r *http.Request, s *sse.Stream, c *createCall) pipeline.DeltaWriter[Delta] {
	return &eventWriter{s: s, h: (*handler)(h), r: r, call: c, cur: -1, buf: make([]byte, 0, 2048), ref: make([]byte, 0, 64),
		resp: newResponse(c.p.Request, ids.New(IDPrefix), h.cfg.Now().Unix())}
}

// eventSink is where an eventWriter writes: the *sse.Stream of a
// request, or the event log of a background run (runSink).
type eventSink interface {
	WriteRaw(event string, data []byte) error
	Flush() error
	Done() error
	Error(err error) error
	Started() bool
}

// eventWriter turns deltas into events. It builds the response as it
// goes (ew.resp.Output holds the finished items) and encodes the events
// of the open item into one reused buffer.
type eventWriter struct {
	s     eventSink
	h     *handler
	r     *http.Request // the request of the stream, for end
	call  *createCall
	resp  *Response
	seq   int
	buf   []byte
	begun bool // created and in_progress sent
	ended bool // the terminal event was sent or attempted

	cur  int        // index of the open item, -1 before the first
	item OutputItem // the open item, if cur == len(resp.Output)
	part bool       // the open reasoning item's summary part is begun
	ref  []byte     // its encoded item_id and output_index (appendItemRef)
	text strings.Builder

	usage      Usage
	hasUsage   bool             // a delta reported the usage
	written    pipeline.Written // output sent, for the usage of a backend that reports none
	incomplete string
}

func (ew *eventWriter) open() bool { return ew.cur >= 0 && ew.cur == len(ew.resp.Output) }

// End ends the stream after err, if it has not ended (see fail).
func (ew *eventWriter) End(r *http.Request, err error) {
	if err != nil {
		ew.fail(r, err)
	}
}

// save stores the response as it ended, if the client is still there
// (see handler.save), before its terminal event is sent: a client that
// asks for the response as soon as it has that event finds it.
func (ew *eventWriter) save() error {
	ctx := ew.r.Context()
	if ctx.Err() != nil {
		return nil
	}
	return ew.h.save(ctx, ew.call.owner, ew.call.p.Request, ew.resp)
}

// Used returns the total of the last usage reported, or, if the backend
// never reported one, the estimate of the prompt and of the output
// written.
func (ew *eventWriter) Used(prompt int64) pipeline.Usage {
	ew.usage = ew.usage.Normalized()
	return ew.written.Usage(ew.usage.charged(), prompt)
}

// usedSoFar is Used without writing the writer's usage, which the
// stored response may point to once the stream ended (a background run
// settles after it stored the response).
func (ew *eventWriter) usedSoFar(prompt int64) pipeline.Usage {
	u := ew.usage.Normalized()
	return ew.written.Usage(u.charged(), prompt)
}

// Add writes the events of one delta, without flushing them.
func (ew *eventWriter) Add(d *Delta) error {
	if d.Usage != nil {
		ew.usage, ew.hasUsage = d.Usage.Normalized(), true
		ew.written.Reported()
	}
	ew.written.Add(len(d.Text) + len(d.Reasoning) + len(d.Arguments))
	if d.Call != nil {
		ew.written.Add(len(d.Call.Name) + len(d.Call.Arguments))
	}
	if d.Incomplete != "" {
		ew.incomplete = d.Incomplete
	}
	noItem := d.Text == "" && d.Call == nil && d.Arguments == "" && d.Reasoning == "" && d.EncryptedContent == ""
	if noItem && (d.Usage != nil || d.Incomplete != "") {
		return nil
	}
	if err := ew.begin(); err != nil {
		return err
	}
	switch d.Item {
	case ew.cur + 1:
		if ew.open() {
			if err := ew.closeItem(StatusCompleted); err != nil {
				return err
			}
		}
		return ew.openItem(d)
	case ew.cur:
		switch ew.item.Type {
		case ItemFunctionCall:
			if d.Text != "" || d.Reasoning != "" {
				return backendError("text or reasoning for output item %d, a function call", d.Item)
			}
			return ew.arguments(d.Arguments)
		case ItemReasoning:
			if d.Text != "" || d.Arguments != "" {
				return backendError("text or arguments for output item %d, a reasoning item", d.Item)
			}
			if d.EncryptedContent != "" {
				ew.item.EncryptedContent = d.EncryptedContent
			}
			return ew.reasoning(d.Reasoning)
		}
		if d.EncryptedContent != "" {
			return backendError("encrypted content for output item %d, which is not a reasoning item", d.Item)
		}
		if d.Arguments != "" || d.Reasoning != "" {
			return backendError("arguments or reasoning for output item %d, a message", d.Item)
		}
		return ew.textDelta(d.Text)
	}
	return backendError("delta for output item %d while item %d is open (items come in order)", d.Item, ew.cur)
}

// begin sends response.created and response.in_progress, once. They wait
// for the first delta so that a backend that fails at once gets a JSON
// error with a real status.
func (ew *eventWriter) begin() error {
	if ew.begun {
		return nil
	}
	ew.begun = true
	if err := ew.sendResponse(EventCreated); err != nil {
		return err
	}
	return ew.sendResponse(EventInProgress)
}

// openItem begins output item d.Item.
func (ew *eventWriter) openItem(d *Delta) error {
	ew.cur = d.Item
	ew.text.Reset()
	if c := d.Call; c != nil {
		if c.Name == "" {
			return backendError("function call (output item %d) without a name", d.Item)
		}
		callID := c.CallID
		if callID == "" {
			callID = ids.New(CallIDPrefix)
		}
		ew.item = OutputItem{Type: ItemFunctionCall, ID: ids.New(FunctionIDPrefix), Status: StatusInProgress,
			CallID: callID, Name: c.Name}
		ew.ref = appendItemRef(ew.ref[:0], ew.item.ID, ew.cur)
		if err := ew.send(EventOutputItemAdded, appendItemEvent(ew.buf[:0], EventOutputItemAdded, ew.seq, ew.cur, &ew.item)); err != nil {
			return err
		}
		return ew.arguments(c.Arguments + d.Arguments)
	}
	if d.Reasoning != "" || d.EncryptedContent != "" {
		if d.Text != "" || d.Arguments != "" {
			return backendError("text or arguments in the first delta of output item %d, a reasoning item", d.Item)
		}
		ew.item = OutputItem{Type: ItemReasoning, ID: d.ID, Status: StatusInProgress, Summary: []SummaryText{},
			EncryptedContent: d.EncryptedContent}
		if ew.item.ID == "" {
			ew.item.ID = ids.New(ReasoningIDPrefix)
		}
		ew.part = false
		ew.ref = appendItemRef(ew.ref[:0], ew.item.ID, ew.cur)
		if err := ew.send(EventOutputItemAdded, appendItemEvent(ew.buf[:0], EventOutputItemAdded, ew.seq, ew.cur, &ew.item)); err != nil {
			return err
		}
		return ew.reasoning(d.Reasoning)
	}
	ew.item = OutputItem{Type: ItemMessage, ID: ids.New(MessageIDPrefix), Status: StatusInProgress, Role: RoleAssistant}
	ew.ref = appendItemRef(ew.ref[:0], ew.item.ID, ew.cur)
	if err := ew.send(EventOutputItemAdded, appendItemEvent(ew.buf[:0], EventOutputItemAdded, ew.seq, ew.cur, &ew.item)); err != nil {
		return err
	}
	if err := ew.send(EventContentPartAdded, appendPartEvent(ew.buf[:0], EventContentPartAdded, ew.seq, ew.ref, "")); err != nil {
		return err
	}
	return ew.textDelta(d.Text)
}

func (ew *eventWriter) textDelta(s string) error {
	if s == "" {
		return nil
	}
	ew.text.WriteString(s)
	return ew.send(EventOutputTextDelta, appendTextEvent(ew.buf[:0], EventOutputTextDelta, ew.seq, ew.ref, "delta", s))
}

func (ew *eventWriter) reasoning(s string) error {
	if s == "" {
		return nil
	}
	if !ew.part {
		// The summary part begins with its first text: an item that
		// carries only its encrypted content has none.
		ew.part = true
		if err := ew.send(EventReasoningPartAdded, appendSummaryEvent(ew.buf[:0], EventReasoningPartAdded, ew.seq, ew.ref, "part", "")); err != nil {
			return err
		}
	}
	ew.text.WriteString(s)
	return ew.send(EventReasoningTextDelta, appendSummaryEvent(ew.buf[:0], EventReasoningTextDelta, ew.seq, ew.ref, "delta", s))
}

func (ew *eventWriter) arguments(s string) error {
	if s == "" {
		return nil
	}
	ew.text.WriteString(s)
	return ew.send(EventFunctionArgumentsDelta, appendArgumentsEvent(ew.buf[:0], EventFunctionArgumentsDelta, ew.seq, ew.ref, "delta", s, ""))
}

// closeItem sends the done events of the open item and adds it to the
// response's output with the given status.
func (ew *eventWriter) closeItem(status Status) error {
	it := &ew.item
	text := ew.text.String()
	it.Status = status
	switch it.Type {
	case ItemFunctionCall:
		it.Arguments = text
		if err := ew.send(EventFunctionArgumentsDone, appendArgumentsEvent(ew.buf[:0], EventFunctionArgumentsDone, ew.seq, ew.ref, "arguments", text, it.Name)); err != nil {
			return err
		}
	case ItemReasoning:
		it.Summary = summaryOf(text)
		if !ew.part {
			break
		}
		if err := ew.send(EventReasoningTextDone, appendSummaryEvent(ew.buf[:0], EventReasoningTextDone, ew.seq, ew.ref, "text", text)); err != nil {
			return err
		}
		if err := ew.send(EventReasoningPartDone, appendSummaryEvent(ew.buf[:0], EventReasoningPartDone, ew.seq, ew.ref, "part", text)); err != nil {
			return err
		}
	default:
		it.Content = []OutputText{{Type: PartOutputText, Text: text, Annotations: []json.RawMessage{}}}
		if err := ew.send(EventOutputTextDone, appendTextEvent(ew.buf[:0], EventOutputTextDone, ew.seq, ew.ref, "text", text)); err != nil {
			return err
		}
		if err := ew.send(EventContentPartDone, appendPartEvent(ew.buf[:0], EventContentPartDone, ew.seq, ew.ref, text)); err != nil {
			return err
		}
	}
	ew.resp.Output = append(ew.resp.Output, *it)
	return ew.send(EventOutputItemDone, appendItemEvent(ew.buf[:0], EventOutputItemDone, ew.seq, ew.cur, it))
}

// Finish closes the open item and sends the terminal event:
// response.incomplete if a delta said so, else response.completed.
func (ew *eventWriter) Finish() error {
	if err := ew.begin(); err != nil {
		return err
	}
	if ew.open() {
		status := StatusCompleted
		if ew.incomplete != "" && ew.item.Type != ItemFunctionCall {
			status = StatusIncomplete
		}
		if err := ew.closeItem(status); err != nil {
			return err
		}
	}
	ew.ended = true
	ew.h.end(ew.resp, ew.incomplete, &ew.usage)
	if err := ew.save(); err != nil {
		// The response was generated, but is not stored: the stream ends
		// with response.failed, which says so, in place of its terminal
		// event.
		return ew.failed(ew.r, apierrors.From(err), false)
	}
	event := EventCompleted
	if ew.resp.Status == StatusIncomplete {
		event = EventIncomplete
	}
	if err := ew.sendResponse(event); err != nil {
		return err
	}
	return ew.s.Done()
}

// fail ends the stream with err: a JSON error with its status if nothing
// was sent yet, else a response.failed event (see failed), stored first.
func (ew *eventWriter) fail(r *http.Request, err error) {
	ctx := r.Context()
	if ctx.Err() != nil || (errors.Is(err, context.Canceled) && !apierrors.Has(err)) {
		return // the client has gone: nothing to write
	}
	if ew.ended || !ew.s.Started() {
		// Nothing sent yet, or the terminal event failed to go out.
		ew.h.cfg.Hook(r, err)
		_ = ew.s.Error(err)
		return
	}
	_ = ew.failed(r, apierrors.From(err), true)
}

// failed ends a stream that has begun with a response.failed event
// whose response carries e, the output so far (an open item with status
// incomplete) and the usage if the backend reported it (else null), and
// then [DONE]. With save, the failed response is stored first (a store
// that fails is logged: the client learns of the failure either way).
func (ew *eventWriter) failed(r *http.Request, e *apierrors.Error, save bool) error {
	ctx := r.Context()
	ew.h.cfg.Hook(r, e)
	level := slog.LevelDebug
	if e.Status >= 500 {
		level = slog.LevelError
	}
	ew.h.cfg.Logger.LogAttrs(ctx, level, "response stream failed", slog.String("response_id", ew.resp.ID), slog.String("error", e.Error()))
	if err := ew.begin(); err != nil {
		return err
	}
	ew.cut(StatusFailed, summaryOf)
	ew.resp.Error = &ResponseError{Code: string(e.Code), Message: e.Message}
	if save {
		if err := ew.save(); err != nil {
			ew.h.cfg.Logger.LogAttrs(ctx, slog.LevelError, "storing the failed response failed",
				slog.String("response_id", ew.resp.ID), slog.String("error", err.Error()))
		}
	}
	if err := ew.sendResponse(EventFailed); err != nil {
		return err
	}
	return ew.s.Done()
}

// cut ends the response with status, cut short: the open item, if any,
// is kept as incomplete with its text so far (a reasoning item's as
// summary(text)), and the usage reported so far (or none) is the
// response's.
func (ew *eventWriter) cut(status Status, summary func(text string) []SummaryText) {
	if ew.open() {
		ew.item.Status = StatusIncomplete
		switch ew.item.Type {
		case ItemFunctionCall:
			ew.item.Arguments = ew.text.String()
		case ItemReasoning:
			ew.item.Summary = summary(ew.text.String())
		default:
			ew.item.Content = []OutputText{{Type: PartOutputText, Text: ew.text.String(), Annotations: []json.RawMessage{}}}
		}
		ew.resp.Output = append(ew.resp.Output, ew.item)
	}
	if ew.hasUsage {
		ew.usage = ew.usage.Normalized()
		ew.resp.Usage = &ew.usage
	}
	ew.resp.Status = status
	ew.resp.CompletedAt = nil
	ew.ended = true
}

// cancelled ends the stream of a background run that was cancelled: the
// open item is kept as incomplete, the response is cancelled with the
// usage reported so far (or none), and stored; no terminal event is
// sent (OpenAI's API has none for a cancelled response), and the stream
// ends.
func (ew *eventWriter) cancelled() {
	ew.cut(StatusCancelled, func(text string) []SummaryText { return []SummaryText{{Type: PartSummary, Text: text}} })
	if err := ew.save(); err != nil {
		ew.h.cfg.Logger.LogAttrs(ew.r.Context(), slog.LevelError, "storing the cancelled response failed",
			slog.String("response_id", ew.resp.ID), slog.String("error", err.Error()))
	}
	_ = ew.s.Done()
}

// sendResponse sends a lifecycle event carrying the whole response.
func (ew *eventWriter) sendResponse(event string) error {
	b, err := appendResponseEvent(ew.buf[:0], event, ew.seq, ew.resp)
	if err != nil {
		return apierrors.Internal(err)
	}
	return ew.send(event, b)
}

// send writes an event encoded in b (which becomes the reused buffer),
// without flushing it: the stream loop flushes, and so do finish and fail.
func (ew *eventWriter) send(event string, b []byte) error {
	ew.buf = b[:0]
	ew.seq++
	return ew.s.WriteRaw(event, b)
}

// backendError is the error for a backend that broke the streaming
// contract: a 500 whose text is only logged.
func backendError(format string, args ...any) error {
	return apierrors.Internal(fmt.Errorf("responses: backend sent a "+format, args...))
}

// Deltas returns b's reply to p as the handler streams it: b.Stream's
// deltas when b is a [StreamingBackend], and otherwise the [Result] of
// b.Complete in whole pieces, all at hand at once: it calls p.Flush
// before b.Complete, so that the reply goes out in one write at its end.
// It serves backends that wrap others (one that routes by model, say)
// and must stream whatever they wrap.
func Deltas(ctx context.Context, b Backend, p *Params) iter.Seq2[Delta, error] {
	if sb, ok := b.(StreamingBackend); ok {
		return sb.Stream(ctx, p)
	}
	return resultDeltas(ctx, b, p)
}

// resultDeltas streams the Result of a backend that does not stream: each
// output item whole, then the usage and the incomplete reason. All are
// at hand at once: it calls p.Flush first, and the reply goes out in one
// write.
func resultDeltas(ctx context.Context, b Backend, p *Params) iter.Seq2[Delta, error] {
	return func(yield func(Delta, error) bool) {
		p.Flush()
		res, err := b.Complete(ctx, p)
		if err == nil {
			err = checkResult(res)
		}
		if err != nil {
			yield(Delta{}, err)
			return
		}
		for i := range res.Output {
			o := &res.Output[i]
			if !yield(Delta{Item: i, Text: o.Text, Call: o.Call, Reasoning: o.Reasoning, EncryptedContent: o.EncryptedContent, ID: o.ID}, nil) {
				return
			}
		}
		yield(Delta{Usage: &res.Usage, Incomplete: res.Incomplete}, nil)
	}
}
