package messages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/sse"
)

// blockKind is the kind of the content block that is open.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockThinking
	blockText
	blockTool
)

// eventWriter turns a chat backend's deltas into the events of a
// messages-format stream: message_start at the first delta,
// content_block_start, ping (once, after the first block's start),
// content_block_delta and content_block_stop for each block in turn
// (thinking, text, tool_use; a new kind of content closes the open
// block), then message_delta and message_stop.
type eventWriter struct {
	s      *sse.Stream
	cfg    *pipeline.Config
	model  string
	prompt int64 // the prompt's estimate, for message_start's input_tokens until the backend reports one

	started  bool // message_start sent
	pinged   bool
	open     blockKind
	index    int // the index of the open block; the next block's once it is closed
	calls    int // tool calls begun
	finish   chat.FinishReason
	usage    chat.Usage
	reported bool
	written  pipeline.Written
	buf      []byte
}

func newEventWriter(s *sse.Stream, cfg *pipeline.Config, model string, prompt int64) *eventWriter {
	return &eventWriter{s: s, cfg: cfg, model: model, prompt: prompt, buf: make([]byte, 0, 512)}
}

// backendError is the error for a backend that broke the streaming
// contract, or one that the format cannot carry: a 500 whose text is
// only logged.
func backendError(format string, args ...any) error {
	return apierrors.Internal(fmt.Errorf("messages: backend sent a "+format, args...))
}

// Add writes the events of one delta, without flushing them.
func (ew *eventWriter) Add(d *chat.Delta) error {
	if d.Usage != nil {
		ew.usage = d.Usage.Normalized()
		ew.reported = true
		ew.written.Reported()
	}
	if d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 && d.FinishReason == "" {
		return nil
	}
	if d.Choice != 0 {
		return backendError("delta for choice %d of a request with one", d.Choice)
	}
	if ew.finish != "" {
		return backendError("delta after its finish reason")
	}
	if err := ew.start(); err != nil {
		return err
	}
	if d.Reasoning != "" {
		if err := ew.begin(blockThinking, "", ""); err != nil {
			return err
		}
		ew.written.Add(len(d.Reasoning))
		if err := ew.delta(DeltaThinking, "thinking", d.Reasoning); err != nil {
			return err
		}
	}
	if d.Content != "" {
		if err := ew.begin(blockText, "", ""); err != nil {
			return err
		}
		ew.written.Add(len(d.Content))
		if err := ew.delta(DeltaText, "text", d.Content); err != nil {
			return err
		}
	}
	for _, tc := range d.ToolCalls {
		switch {
		case tc.Index == ew.calls:
			if tc.Name == "" {
				return backendError("tool call %d that begins without a name", tc.Index)
			}
			id := tc.ID
			if id == "" {
				id = ids.New(toolIDPrefix)
			}
			ew.calls++
			if err := ew.begin(blockTool, id, tc.Name); err != nil {
				return err
			}
			ew.written.Add(len(tc.Name))
		case tc.Index == ew.calls-1 && ew.open == blockTool:
		case tc.Index >= 0 && tc.Index < ew.calls:
			// The format streams one block at a time: a call's
			// fragments cannot follow the start of the next block.
			return backendError("fragment of tool call %d after the next content began", tc.Index)
		default:
			return backendError("tool call index %d that is not the next one (%d)", tc.Index, ew.calls)
		}
		if tc.Arguments != "" {
			ew.written.Add(len(tc.Arguments))
			if err := ew.delta(DeltaInputJSON, "partial_json", tc.Arguments); err != nil {
				return err
			}
		}
	}
	if d.FinishReason != "" {
		ew.finish = d.FinishReason
	}
	return nil
}

// start sends message_start, once.
func (ew *eventWriter) start() error {
	if ew.started {
		return nil
	}
	ew.started = true
	u := Usage{InputTokens: int(ew.prompt)}
	if ew.reported {
		u = usageOf(&ew.usage)
	}
	b := append(ew.buf[:0], `{"type":"message_start","message":{"id":`...)
	b = jsonenc.AppendString(b, ids.New(IDPrefix))
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = jsonenc.AppendString(b, ew.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	u.OutputTokens = 0
	b = appendUsage(b, &u)
	b = append(b, `}}`...)
	return ew.send(EventMessageStart, b)
}

// begin makes a block of kind k the open one: if another is open, it is
// closed, and the new one started (id and name are a tool_use block's).
// An open block of kind k stays open, but for tool_use, each call of
// which is a block of its own.
func (ew *eventWriter) begin(k blockKind, id, name string) error {
	if ew.open == k && k != blockTool {
		return nil
	}
	if err := ew.stop(); err != nil {
		return err
	}
	b := append(ew.buf[:0], `{"type":"content_block_start","index":`...)
	b = strconv.AppendInt(b, int64(ew.index), 10)
	switch k {
	case blockThinking:
		b = append(b, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	case blockText:
		b = append(b, `,"content_block":{"type":"text","text":""}}`...)
	case blockTool:
		b = append(b, `,"content_block":{"type":"tool_use","id":`...)
		b = jsonenc.AppendString(b, id)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, name)
		b = append(b, `,"input":{}}}`...)
	}
	ew.open = k
	if err := ew.send(EventContentBlockStart, b); err != nil {
		return err
	}
	return ew.ping()
}

// ping sends the ping event, once.
func (ew *eventWriter) ping() error {
	if ew.pinged {
		return nil
	}
	ew.pinged = true
	return ew.send(EventPing, append(ew.buf[:0], `{"type":"ping"}`...))
}

// delta sends a content_block_delta of the open block.
func (ew *eventWriter) delta(typ, member, text string) error {
	return ew.send(EventContentBlockDelta, appendDelta(ew.buf[:0], ew.index, typ, member, text))
}

// appendDelta appends a content_block_delta event of block index: a
// delta of type typ whose member holds text.
func appendDelta(b []byte, index int, typ, member, text string) []byte {
	b = append(b, `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","`...)
	b = append(b, member...)
	b = append(b, `":`...)
	b = jsonenc.AppendString(b, text)
	return append(b, `}}`...)
}

// stop closes the open block, if any.
func (ew *eventWriter) stop() error {
	if ew.open == blockNone {
		return nil
	}
	b := append(ew.buf[:0], `{"type":"content_block_stop","index":`...)
	b = strconv.AppendInt(b, int64(ew.index), 10)
	b = append(b, '}')
	ew.open = blockNone
	ew.index++
	return ew.send(EventContentBlockStop, b)
}

// send writes one event without flushing it, and keeps b's memory.
func (ew *eventWriter) send(event string, b []byte) error {
	ew.buf = b[:0]
	return ew.s.WriteRaw(event, b)
}

// Finish closes the open block and sends message_delta, with the stop
// reason and the usage, and message_stop.
func (ew *eventWriter) Finish() error {
	if err := ew.start(); err != nil {
		return err
	}
	if err := ew.stop(); err != nil {
		return err
	}
	if err := ew.ping(); err != nil {
		return err
	}
	reason := ew.finish
	if reason == "" && ew.calls > 0 {
		reason = chat.FinishToolCalls
	}
	u := usageOf(&ew.usage)
	if !ew.reported {
		u = Usage{InputTokens: int(ew.prompt), OutputTokens: int(ew.written.Usage(pipeline.Usage{}, ew.prompt).Output)}
	}
	b := append(ew.buf[:0], `{"type":"message_delta","delta":{"stop_reason":"`...)
	b = append(b, StopReasonOf(reason)...)
	b = append(b, `","stop_sequence":null},"usage":`...)
	b = appendUsage(b, &u)
	b = append(b, '}')
	if err := ew.send(EventMessageDelta, b); err != nil {
		return err
	}
	if err := ew.send(EventMessageStop, append(ew.buf[:0], `{"type":"message_stop"}`...)); err != nil {
		return err
	}
	return ew.s.Flush()
}

// End ends the stream after err, if any: before anything was sent, a
// JSON error with its real status; afterwards an "error" event with the
// format's error envelope, as the format's own streams send one.
func (ew *eventWriter) End(r *http.Request, err error) {
	if err == nil {
		return
	}
	ew.cfg.Hook(r, err)
	if !ew.s.Started() {
		_ = ew.s.Error(err)
		return
	}
	if errors.Is(err, context.Canceled) && !apierrors.Has(err) {
		return
	}
	e := apierrors.From(err)
	level := slog.LevelDebug
	if e.Status >= 500 {
		level = slog.LevelError
	}
	ew.cfg.Logger.LogAttrs(r.Context(), level, "stream failed", slog.String("path", r.URL.Path), slog.String("error", e.Error()))
	data, merr := json.Marshal(apierrors.MessagesBodyOf(e))
	if merr != nil {
		return
	}
	_ = ew.s.SendRaw(EventError, data)
}

// Used returns the usage to charge: the last usage reported, or, if the
// backend never reported one, the estimate of the prompt and of the
// output written.
func (ew *eventWriter) Used(prompt int64) pipeline.Usage {
	return ew.written.Usage(chunks.Charged(&ew.usage), prompt)
}

// appendUsage appends the usage object u, its cache counts when set, as
// encoding/json would.
func appendUsage(b []byte, u *Usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	if u.CacheCreationInputTokens != nil {
		b = append(b, `,"cache_creation_input_tokens":`...)
		b = strconv.AppendInt(b, int64(*u.CacheCreationInputTokens), 10)
	}
	if u.CacheReadInputTokens != nil {
		b = append(b, `,"cache_read_input_tokens":`...)
		b = strconv.AppendInt(b, int64(*u.CacheReadInputTokens), 10)
	}
	return append(b, '}')
}
