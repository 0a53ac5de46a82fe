package gemini

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/chunks"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// wire writes the events of a :streamGenerateContent reply: with sse set,
// one "data: <json>" line and a blank line per event (no event: line, no
// id, no [DONE]: the official clients read data lines only, and take any
// other line for an error); otherwise one JSON array whose elements are
// the events, separated by ",\r\n" as Google's API sends them. Silences
// longer than keepAlive are bridged with a blank line pair (SSE; an
// event-less SSE block, which readers skip) or a line break (array; JSON
// whitespace), never with an SSE comment, which the official Go client
// takes for an invalid chunk. The status and headers go out with the
// first write. Its methods are safe for concurrent use with the
// keep-alive timer.
type wire struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	sse bool

	mu        sync.Mutex
	started   bool // headers sent
	events    int
	ended     bool
	err       error // sticky write error
	dirty     bool  // written, not flushed
	keepAlive time.Duration
	last      time.Time
	timer     *time.Timer
	buf       []byte
}

func newWire(w http.ResponseWriter, r *http.Request, sse bool, keepAlive time.Duration) *wire {
	s := &wire{w: w, rc: http.NewResponseController(w), sse: sse, keepAlive: keepAlive, last: time.Now()}
	if keepAlive > 0 {
		s.mu.Lock()
		s.timer = time.AfterFunc(keepAlive, s.tick)
		s.mu.Unlock()
	}
	return s
}

// startLocked sends the status and headers.
func (s *wire) startLocked() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Del("Content-Length")
	if s.sse {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
	} else {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	s.w.WriteHeader(http.StatusOK)
}

// writeLocked writes b, after the headers.
func (s *wire) writeLocked(b []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.ended {
		return errEnded
	}
	s.startLocked()
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	s.dirty = true
	s.last = time.Now()
	return nil
}

var errEnded = fmt.Errorf("gemini: stream ended")

// event writes one event, without flushing it.
func (s *wire) event(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(s.frame(data))
}

// frame returns data framed as the next event, in s.buf.
func (s *wire) frame(data []byte) []byte {
	b := s.buf[:0]
	switch {
	case s.sse:
		b = append(b, "data: "...)
		b = append(b, data...)
		b = append(b, "\n\n"...)
	case s.events == 0:
		b = append(b, '[')
		b = append(b, data...)
	default:
		b = append(b, ",\r\n"...)
		b = append(b, data...)
	}
	s.events++
	if cap(b) <= 64<<10 {
		s.buf = b
	}
	return b
}

// Flush sends what was written (pipeline.Flusher).
func (s *wire) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

func (s *wire) flushLocked() error {
	if s.err != nil {
		return s.err
	}
	if !s.dirty {
		return nil
	}
	s.dirty = false
	if err := s.rc.Flush(); err != nil {
		s.err = err
		return err
	}
	return nil
}

// end ends the stream: the array's "]", and a flush.
func (s *wire) end() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sse {
		b := []byte{']'}
		if s.events == 0 {
			b = []byte("[]")
		}
		if err := s.writeLocked(b); err != nil {
			return err
		}
	}
	err := s.flushLocked()
	s.ended = true
	return err
}

// fail ends a started stream with the event body, an error object.
func (s *wire) fail(body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeLocked(s.frame(body)); err != nil {
		return err
	}
	if !s.sse {
		if err := s.writeLocked([]byte{']'}); err != nil {
			return err
		}
	}
	err := s.flushLocked()
	s.ended = true
	return err
}

// abandon ends the stream if it has not started, writing nothing, so that
// the handler can answer with a JSON error, and reports whether it did:
// after it, no keep-alive can start the reply.
func (s *wire) abandon() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return false
	}
	s.ended = true
	return true
}

// close ends the stream and stops the timer: nothing is written after.
func (s *wire) close() {
	s.mu.Lock()
	if !s.ended && s.err == nil {
		_ = s.flushLocked()
	}
	s.ended = true
	s.mu.Unlock()
	s.stopTimer()
}

func (s *wire) stopTimer() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

// tick writes a keep-alive after a silence of keepAlive, and rearms.
func (s *wire) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.err != nil {
		return
	}
	if idle := time.Since(s.last); idle < s.keepAlive {
		s.timer.Reset(s.keepAlive - idle)
		return
	}
	ka := []byte("\n")
	if s.sse {
		ka = []byte("\n\n")
	}
	if s.writeLocked(ka) == nil && s.flushLocked() == nil {
		s.timer.Reset(s.keepAlive)
	}
}

// errorBody is the event of a stream that fails: Google's error object.
func errorBody(e *apierrors.Error) []byte {
	b, err := json.Marshal(apierrors.GoogleBodyOf(e))
	if err != nil {
		return []byte(`{"error":{"code":500,"message":"internal server error","status":"INTERNAL"}}`)
	}
	return b
}

func levelOf(e *apierrors.Error) slog.Level {
	if e.Status >= 500 {
		return slog.LevelError
	}
	return slog.LevelDebug
}

func errorAttr(e *apierrors.Error) slog.Attr {
	return slog.String("error", e.Error())
}

// translator turns a chat backend's deltas into the events of a
// :streamGenerateContent reply, each a [Response] encoded:
//
//   - content and (when thoughts are asked for) reasoning go out as they
//     come, one event per delta, as text parts of the delta's candidate;
//   - a function call goes out whole (Gemini streams calls whole), with
//     the candidate's finishReason, in the event that ends the candidate;
//   - the events that end candidates are held back until another
//     candidate's content comes or the stream ends, so that the last one
//     carries usageMetadata, as Google's last event does;
//   - every event carries modelVersion and responseId.
type translator struct {
	model      string
	responseID string
	thoughts   bool
	cands      []candState
	held       []Candidate // ended, not sent
	usage      chat.Usage
	reported   bool
	written    pipeline.Written
	prompt     int64
	buf        []byte
	tail       []byte // `],"modelVersion":…,"responseId":…}`
	events     [][]byte
	pool       [2][]byte
}

type candState struct {
	started  bool
	finished bool
	calls    []callState
}

type callState struct {
	id, name string
	args     []byte
}

func newTranslator(model string, n int, thoughts bool, prompt int64) *translator {
	t := &translator{model: model, responseID: ids.New(""), thoughts: thoughts, cands: make([]candState, n), prompt: prompt}
	t.tail = append(t.tail, `],"modelVersion":`...)
	t.tail = jsonenc.AppendString(t.tail, model)
	t.tail = append(t.tail, `,"responseId":`...)
	t.tail = jsonenc.AppendString(t.tail, t.responseID)
	t.tail = append(t.tail, '}')
	return t
}

// add translates one delta; it returns the events to write, valid until
// the next call.
func (t *translator) add(d *chat.Delta) ([][]byte, error) {
	t.events = t.events[:0]
	if d.Usage != nil {
		t.usage = d.Usage.Normalized()
		t.reported = true
		t.written.Reported()
		if d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 && d.FinishReason == "" {
			return nil, nil
		}
	}
	if d.Choice < 0 || d.Choice >= len(t.cands) {
		return nil, backendError("delta for choice %d of a request with %d candidates", d.Choice, len(t.cands))
	}
	st := &t.cands[d.Choice]
	if st.finished {
		return nil, backendError("delta for choice %d after its finish reason", d.Choice)
	}
	st.started = true
	for _, tc := range d.ToolCalls {
		switch {
		case tc.Index == len(st.calls):
			if tc.Name == "" {
				return nil, backendError("tool call %d of choice %d begins without a name", tc.Index, d.Choice)
			}
			id := tc.ID
			if id == "" {
				id = ids.New("call_")
			}
			st.calls = append(st.calls, callState{id: id, name: tc.Name, args: []byte(tc.Arguments)})
			t.written.Add(len(tc.Name) + len(tc.Arguments))
		case tc.Index >= 0 && tc.Index < len(st.calls):
			c := &st.calls[tc.Index]
			c.args = append(c.args, tc.Arguments...)
			t.written.Add(len(tc.Arguments))
		default:
			return nil, backendError("tool call index %d of choice %d is not the next one (%d)", tc.Index, d.Choice, len(st.calls))
		}
	}
	text := d.Content != "" || (t.thoughts && d.Reasoning != "")
	t.written.Add(len(d.Content) + len(d.Reasoning))
	if text {
		if len(t.held) > 0 {
			t.events = append(t.events, t.heldEvent(false))
		}
		t.events = append(t.events, t.textEvent(d.Choice, d.Content, d.Reasoning))
	}
	if d.FinishReason != "" {
		t.end(d.Choice, d.FinishReason)
	}
	return t.events, nil
}

// end ends candidate i with reason, holding its last event back.
func (t *translator) end(i int, reason chat.FinishReason) {
	st := &t.cands[i]
	st.finished = true
	c := Candidate{Index: i, FinishReason: finishReasonOf(reason), Content: &Content{Role: RoleModel}}
	for _, call := range st.calls {
		args, ok := ArgsObject(string(call.args))
		if !ok {
			c.FinishReason = FinishMalformedFunctionCall
			continue
		}
		c.Content.Parts = append(c.Content.Parts, Part{FunctionCall: &FunctionCall{ID: call.id, Name: call.name, Args: args}})
	}
	if len(c.Content.Parts) == 0 {
		c.Content.Parts = []Part{{Text: ""}}
	}
	t.held = append(t.held, c)
}

// textEvent encodes the event of a text delta of candidate i.
func (t *translator) textEvent(i int, content, reasoning string) []byte {
	b := t.next()
	b = append(b, `{"candidates":[{"content":{"parts":[`...)
	comma := false
	if t.thoughts && reasoning != "" {
		b = append(b, `{"text":`...)
		b = jsonenc.AppendString(b, reasoning)
		b = append(b, `,"thought":true}`...)
		comma = true
	}
	if content != "" {
		if comma {
			b = append(b, ',')
		}
		b = append(b, `{"text":`...)
		b = jsonenc.AppendString(b, content)
		b = append(b, '}')
	}
	b = append(b, `],"role":"model"},"index":`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, '}')
	b = append(b, t.tail...)
	t.keep(b)
	return b
}

// next returns an empty buffer for an event that does not share memory
// with the other event of the same delta.
func (t *translator) next() []byte {
	k := len(t.events) & 1
	return t.pool[k][:0]
}

func (t *translator) keep(b []byte) {
	k := len(t.events) & 1
	if cap(b) <= 64<<10 {
		t.pool[k] = b
	}
}

// heldEvent encodes the held candidates, and the usage if last.
func (t *translator) heldEvent(last bool) []byte {
	r := Response{Candidates: t.held, ModelVersion: t.model, ResponseID: t.responseID}
	if last {
		u := usageOf(t.finalUsage())
		r.UsageMetadata = &u
	}
	b, _ := json.Marshal(r) // plain types: cannot fail
	t.held = t.held[:0]
	return b
}

// finish ends the candidates still open and returns the last event, with
// the usage.
func (t *translator) finish() []byte {
	for i := range t.cands {
		if !t.cands[i].finished {
			reason := chat.FinishStop
			if len(t.cands[i].calls) > 0 {
				reason = chat.FinishToolCalls
			}
			t.end(i, reason)
		}
	}
	return t.heldEvent(true)
}

// finalUsage is the usage reported, or an estimate.
func (t *translator) finalUsage() *chat.Usage {
	if !t.reported {
		u := t.written.Usage(pipeline.Usage{}, t.prompt)
		t.usage = chat.Usage{PromptTokens: int(t.prompt), CompletionTokens: int(u.Output)}
	}
	t.usage = t.usage.Normalized()
	return &t.usage
}

// used returns the tokens to charge.
func (t *translator) used() pipeline.Usage {
	return t.written.Usage(chunks.Charged(&t.usage), t.prompt)
}

// backendError is the error for a backend that broke the streaming
// contract: a 500 whose text is only logged.
func backendError(format string, args ...any) error {
	return apierrors.Internal(fmt.Errorf("gemini: backend sent a "+format, args...))
}
