package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unsafe"

	gosse "github.com/tmaxmax/go-sse"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// DoneData is the data of the event that ends chat completions and legacy
// completions streams: "data: [DONE]".
const DoneData = "[DONE]"

// keepAliveComment is the text of the comment line that bridges silences.
const keepAliveComment = "keep-alive"

// maxRetained is the largest buffer a Stream keeps between events; a larger
// one, grown by an unusually big event, is released after that event.
const maxRetained = 64 << 10

var (
	// ErrClosed is returned by the write methods of a [Stream] that has
	// ended: after [Stream.Done], [Stream.Error] or [Stream.Close].
	ErrClosed = errors.New("sse: stream closed")

	// ErrInvalidEventName is returned (wrapped) for an event name that
	// holds a line break: an SSE event: field is one line.
	ErrInvalidEventName = errors.New("sse: invalid event name")
)

// A Stream writes one server-sent event stream to a client. Open one with
// [Start]. Its methods are safe for concurrent use: every write, the
// keep-alive comments included, holds one lock, so events never
// interleave.
//
// Each event is flushed to the client as soon as it is written, except
// those written with [Stream.WriteRaw], which wait for the next flush so
// that a burst of events costs one flush (one write system call). Once the
// request's context is done, or a write has failed, every write method
// returns that error and writes nothing, so a producer loop can stop at
// the first error.
//
// A Stream must be closed before the handler returns, usually with
// defer s.Close(): net/http forbids writes after ServeHTTP returns, and
// Close stops the keep-alive timer.
type Stream struct {
	w         http.ResponseWriter
	r         *http.Request
	ctx       context.Context
	rd        apierrors.Renderer
	keepAlive time.Duration

	// timer writes the keep-alive comments (see tick); nil when they are
	// disabled. It runs no goroutine while it waits.
	timer *time.Timer

	mu      sync.Mutex
	sess    *gosse.Session
	out     *frameWriter
	msg     gosse.Message
	buf     bytes.Buffer  // JSON encoding buffer, reused across events
	enc     *json.Encoder // writes to buf; made by the first encoding
	started bool          // headers sent
	ended   bool          // Done, Error or Close called
	err     error         // sticky: the write or context error that broke the stream
	last    time.Time     // time of the last write, for keep-alive
}

// Start prepares an SSE stream on w. It writes nothing: the status (200)
// and the headers go out with the first event or keep-alive comment, so a
// handler can still answer with a JSON error and a real status until then
// ([Stream.Error] does that by itself; [Stream.Started] tells which case
// applies).
//
// The headers are those of the spec: Content-Type: text/event-stream,
// Cache-Control: no-cache and, on HTTP/1.x, Connection: keep-alive (HTTP/2
// forbids connection-specific headers; Go's HTTP/2 server drops it
// anyway). X-Accel-Buffering: no asks nginx-style proxies not to buffer
// the stream. Headers that the handler set on w before the first event
// are sent as well; a Content-Length is removed.
//
// Start returns an error wrapping [gosse.ErrUpgradeUnsupported] when w
// cannot flush (it is not an [http.Flusher], even through Unwrap). It
// starts the keep-alive timer unless [WithKeepAlive] disabled it; call
// [Stream.Close] before the handler returns.
func Start(w http.ResponseWriter, r *http.Request, opts ...Option) (*Stream, error) {
	cfg := newConfig(opts)
	sess, err := gosse.Upgrade(w, r)
	if err != nil {
		return nil, fmt.Errorf("sse: start: %w", err)
	}
	s := &Stream{
		w:         w,
		r:         r,
		ctx:       r.Context(),
		rd:        cfg.renderer,
		keepAlive: cfg.keepAlive,
		sess:      sess,
	}
	// The Session writes each event into out, which hands the whole frame
	// to the ResponseWriter in one Write when the Session flushes: one
	// call into net/http per event instead of one per field.
	s.out = &frameWriter{ResponseWriter: sess.Res}
	sess.Res = s.out
	if s.keepAlive > 0 {
		s.last = time.Now()
		s.mu.Lock() // the first tick may come before the assignment
		s.timer = time.AfterFunc(s.keepAlive, s.tick)
		s.mu.Unlock()
	}
	return s, nil
}

// Started reports whether the stream has sent its headers, that is,
// whether an event or a keep-alive comment has been written. Until then
// the handler may still answer with a JSON error and a real status.
func (s *Stream) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Send writes v, encoded as JSON, as one unnamed event ("data: <json>")
// and flushes it. It is [Stream.SendJSON] with no event name.
func (s *Stream) Send(v any) error {
	return s.SendJSON("", v)
}

// SendJSON writes v, encoded as JSON, as one event and flushes it. A
// non-empty event adds an "event: <event>" line before the data, as the
// responses stream does. The encoding is that of encoding/json, without
// HTML escaping; its output holds no line break, so the event has one data
// line. Pass pre-encoded JSON to [Stream.SendRaw] instead: a []byte given
// here would be encoded as base64.
//
// SendJSON returns an error, and writes nothing, if v cannot be encoded or
// event holds a line break ([ErrInvalidEventName]); the stream stays
// usable. It also returns the error of the write, [ErrClosed] after the
// stream ended, and the context's error once the request is done.
func (s *Stream) SendJSON(event string, v any) error {
	typ, err := s.lockWritable(event)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	data, err := s.encodeLocked(v)
	if err != nil {
		return err
	}
	return s.writeLocked(typ, data)
}

// SendRaw writes data, which is expected to be pre-encoded JSON, as one
// event, unchanged, and flushes it. A non-empty event adds an event: line.
// It is for passing an upstream stream through without decoding it. data
// may hold line breaks: each line becomes one data: line, which readers
// join with "\n" (CR and CRLF arrive as LF, as SSE defines). SendRaw does
// not retain data.
//
// Errors are those of [Stream.SendJSON].
func (s *Stream) SendRaw(event string, data []byte) error {
	return s.send(event, bytesToString(data))
}

// SendEvent writes ev as it is, as [Stream.SendRaw] does: the relay passes
// the events that [Read] yields from an upstream stream through with it.
func (s *Stream) SendEvent(ev Event) error {
	return s.send(ev.Type, ev.Data)
}

// WriteRaw is [Stream.SendRaw] without the flush: the event goes to the
// ResponseWriter, whose buffers keep it, after any other unflushed
// events, until [Stream.Flush], the next Send* method, [Stream.Done],
// [Stream.Error] or [Stream.Close] flushes them all at once (net/http
// sends its buffers on by itself only when they fill up). A producer
// that knows that more events are at hand writes them with WriteRaw and
// flushes after the last one, so that a burst costs one write system
// call instead of one per event.
//
// Unflushed events are not yet activity for the keep-alive clock: if the
// keep-alive interval passes with events still unflushed, the keep-alive
// timer flushes them instead of writing a comment. Errors are those of
// [Stream.SendJSON]; WriteRaw does not retain data.
func (s *Stream) WriteRaw(event string, data []byte) error {
	typ, err := s.lockWritable(event)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.msg = gosse.Message{Type: typ}
	appendData(&s.msg, bytesToString(data))
	err = s.appendLocked(&s.msg)
	s.msg = gosse.Message{}
	return err
}

// Flush sends the events that [Stream.WriteRaw] left in net/http's
// buffers to the client, in one write system call. With nothing pending
// it does nothing. It returns the error of the write, [ErrClosed] after the stream
// ended, and the context's error once the request is done.
func (s *Stream) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writableLocked(); err != nil {
		return err
	}
	return s.flushLocked()
}

// lockWritable returns the type of the events named event and locks the
// stream, if the name is valid and the stream can be written to (see
// writableLocked): the caller then unlocks it. Otherwise it returns the
// error and leaves the stream unlocked.
func (s *Stream) lockWritable(event string) (gosse.EventType, error) {
	typ, err := eventType(event)
	if err != nil {
		return typ, err
	}
	s.mu.Lock()
	if err := s.writableLocked(); err != nil {
		s.mu.Unlock()
		return typ, err
	}
	return typ, nil
}

func (s *Stream) send(event, data string) error {
	typ, err := s.lockWritable(event)
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	return s.writeLocked(typ, data)
}

// Done writes the final "data: [DONE]" event of a stream, flushes it, and
// ends the stream: later writes return [ErrClosed] and the keep-alive
// timer stops. Every stream of the spec ends with it: chat completions and
// completions streams after their last chunk, responses streams after
// their terminal event (completed, incomplete or failed).
func (s *Stream) Done() error {
	s.mu.Lock()
	err := s.writableLocked()
	if err == nil {
		err = s.writeLocked(gosse.EventType{}, DoneData)
	}
	s.ended = true
	s.mu.Unlock()
	s.stopKeepAlive()
	return err
}

// Error ends the stream with err, in the one way that suits the moment:
//
//   - Before the stream started, it answers with a JSON error and its real
//     HTTP status, through the renderer of [WithRenderer] (by default
//     apierrors' general shape).
//   - After it started, it writes one unnamed event whose data is the
//     general error body, data: {"error":{"message","type","param","code"}},
//     and no [DONE]: the official SDKs surface that as an error.
//
// Either way the client sees only what [apierrors.From] makes of err: an
// error that is not an [*apierrors.Error] is sent as "internal server
// error" and its text is only logged. If the client has gone (the request
// context is done, or err is context.Canceled) nothing is written.
//
// Error logs err with the renderer's logger: at error level for a 5xx,
// at debug level otherwise. It stops the keep-alive timer, and later
// writes return [ErrClosed]. It returns the error of its own write, if
// any, or the context's error if the client has gone; [ErrClosed] if the
// stream had already ended. Error(nil) does nothing and returns nil.
func (s *Stream) Error(err error) error {
	if err == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return ErrClosed
	}
	werr := s.writableLocked()
	// Once ended is set, under the lock that the keep-alive timer takes
	// to write, nothing else is written: a comment either went out before
	// (and the stream has started) or never will.
	s.ended = true
	s.stopKeepAlive()
	if werr != nil {
		// The client has gone, or a write already failed.
		s.log(slog.LevelDebug, "client went away", err)
		return werr
	}
	if !s.started {
		s.rd.Write(s.w, s.r, err)
		return nil
	}
	if errors.Is(err, context.Canceled) && !apierrors.Has(err) {
		s.log(slog.LevelDebug, "client went away", err)
		return nil
	}
	e := apierrors.From(err)
	level := slog.LevelDebug
	if e.Status >= 500 {
		level = slog.LevelError
	}
	s.log(level, "stream failed", e)
	data, err := s.encodeLocked(apierrors.BodyOf(e))
	if err != nil {
		return err
	}
	return s.writeLocked(gosse.EventType{}, data)
}

// Close ends the stream, if Done or Error has not, and stops the keep-alive
// timer. When Close returns, nothing more is written to the response.
// Close is idempotent; it writes nothing of its own, but flushes the
// events that [Stream.WriteRaw] left unflushed, if the stream can still
// be written.
func (s *Stream) Close() {
	s.mu.Lock()
	if !s.ended && s.writableLocked() == nil {
		_ = s.flushLocked()
	}
	s.ended = true
	s.mu.Unlock()
	s.stopKeepAlive()
}

// writableLocked returns the error that a write must return instead of
// writing, if any.
func (s *Stream) writableLocked() error {
	if s.ended {
		return ErrClosed
	}
	if s.err != nil {
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = fmt.Errorf("sse: client went away: %w", err)
		return s.err
	}
	return nil
}

// encodeLocked encodes v into s.buf and returns the encoding, without the
// newline that json.Encoder appends, as a string that aliases s.buf: it is
// valid until the next encoding.
func (s *Stream) encodeLocked(v any) (string, error) {
	if s.buf.Cap() > maxRetained {
		s.buf = bytes.Buffer{}
		s.enc = nil
	}
	if s.enc == nil {
		s.enc = json.NewEncoder(&s.buf)
		s.enc.SetEscapeHTML(false)
	}
	s.buf.Reset()
	if err := s.enc.Encode(v); err != nil {
		return "", fmt.Errorf("sse: encode event: %w", err)
	}
	b := s.buf.Bytes()
	return bytesToString(b[:len(b)-1]), nil
}

// writeLocked writes one event with data, which may alias a buffer: the
// message that refers to it is cleared before writeLocked returns.
func (s *Stream) writeLocked(typ gosse.EventType, data string) error {
	s.msg = gosse.Message{Type: typ}
	appendData(&s.msg, data)
	err := s.sendLocked(&s.msg)
	s.msg = gosse.Message{}
	return err
}

// sendLocked sends the headers if they have not gone out yet, then m, and
// flushes: m leaves with the events that WriteRaw left unflushed.
func (s *Stream) sendLocked(m *gosse.Message) error {
	if err := s.appendLocked(m); err != nil {
		return err
	}
	return s.flushLocked()
}

// appendLocked writes m to the ResponseWriter, after the headers if they
// have not been prepared yet, without flushing: the event waits in
// net/http's buffers (which send it on by themselves only when they fill
// up) until flushLocked.
func (s *Stream) appendLocked(m *gosse.Message) error {
	if !s.started {
		s.started = true
		h := s.w.Header()
		h.Set("Cache-Control", "no-cache")
		if s.r.ProtoMajor == 1 {
			h.Set("Connection", "keep-alive")
		}
		h.Set("X-Accel-Buffering", "no")
		h.Del("Content-Length")
		// The Session sets Content-Type: text/event-stream.
	}
	err := s.sess.Send(m)
	if err == nil {
		err = s.out.writeOut()
	}
	return s.failLocked(err)
}

// flushLocked flushes what appendLocked wrote, if anything: the time of
// the flush is that of the last activity, for keep-alive.
func (s *Stream) flushLocked() error {
	if !s.out.pending {
		return nil
	}
	if err := s.failLocked(s.out.Flush()); err != nil {
		return err
	}
	if s.keepAlive > 0 {
		s.last = time.Now()
	}
	return nil
}

// failLocked records err, if not nil, as the error that breaks the
// stream, and drops what was left unsent.
func (s *Stream) failLocked(err error) error {
	if err == nil {
		return nil
	}
	s.out.buf = s.out.buf[:0]
	s.out.pending = false
	s.err = fmt.Errorf("sse: write: %w", err)
	return s.err
}

// tick runs on the keep-alive timer. It writes a keep-alive comment if
// the stream has been silent for the keep-alive interval, and arms the
// timer for the next check, until the stream can no longer be written.
// It writes under s.mu, like every write, and writes nothing once the
// stream has ended: that is what makes Close final without waiting for
// a tick in progress.
func (s *Stream) tick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writableLocked() != nil {
		return
	}
	if idle := time.Since(s.last); idle < s.keepAlive {
		s.timer.Reset(s.keepAlive - idle)
		return
	}
	if s.out.pending {
		// Events written without a flush have waited long enough: they
		// bridge the silence better than a comment.
		if s.flushLocked() != nil {
			return
		}
	} else {
		var m gosse.Message
		m.AppendComment(keepAliveComment)
		if s.sendLocked(&m) != nil {
			return
		}
	}
	s.timer.Reset(s.keepAlive)
}

// stopKeepAlive stops the keep-alive timer. A tick that is already
// running finds the stream ended and neither writes nor re-arms the
// timer.
func (s *Stream) stopKeepAlive() {
	if s.timer != nil {
		s.timer.Stop()
	}
}

func (s *Stream) log(level slog.Level, msg string, err error) {
	l := s.rd.Logger
	if l == nil || !l.Enabled(s.ctx, level) {
		return
	}
	l.LogAttrs(s.ctx, level, msg,
		slog.String("method", s.r.Method),
		slog.String("path", s.r.URL.Path),
		slog.String("error", err.Error()),
	)
}

// eventType validates an event name; "" is an unnamed event.
func eventType(name string) (gosse.EventType, error) {
	if name == "" {
		return gosse.EventType{}, nil
	}
	t, err := gosse.NewType(name)
	if err != nil {
		return gosse.EventType{}, fmt.Errorf("%w %q: it holds a line break", ErrInvalidEventName, name)
	}
	return t, nil
}

// appendData adds data to m as data: lines. Data without line breaks (all
// JSON that encoding/json writes) is one line. Otherwise each line is one
// data: line, after CRLF and CR became LF (readers normalise them so
// anyway); an empty line, including empty data, is written as an empty
// data: line so that it survives the trip.
func appendData(m *gosse.Message, data string) {
	if strings.IndexByte(data, '\n') < 0 && strings.IndexByte(data, '\r') < 0 {
		if data == "" {
			data = "\n" // one empty data: line
		}
		m.AppendData(data)
		return
	}
	if strings.IndexByte(data, '\r') >= 0 {
		data = strings.ReplaceAll(data, "\r\n", "\n")
		data = strings.ReplaceAll(data, "\r", "\n")
	}
	for line := range strings.SplitSeq(data, "\n") {
		if line == "" {
			line = "\n"
		}
		m.AppendData(line)
	}
}

// bytesToString returns a string that shares b's memory, to hand encoded
// events to gosse.Message without a copy. The caller must drop every
// reference to the string before b is modified: writeLocked clears the
// message that holds it before it returns. It saves a copy of every
// event (unsafe measured: one allocation per event; BENCHMARKS.md, JSON
// codecs).
func bytesToString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// frameWriter collects the fields that a gosse.Session writes for one
// event and hands them to the ResponseWriter in one Write (writeOut): one
// call into net/http per event instead of one per field. Flushing is
// separate, so that several events can share one flush.
type frameWriter struct {
	gosse.ResponseWriter
	buf     []byte
	pending bool // written to the ResponseWriter since the last flush
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.buf = append(f.buf, p...)
	return len(p), nil
}

// writeOut hands the collected frame to the ResponseWriter, without
// flushing.
func (f *frameWriter) writeOut() error {
	f.pending = true
	_, err := f.ResponseWriter.Write(f.buf)
	if cap(f.buf) > maxRetained {
		f.buf = nil
	} else {
		f.buf = f.buf[:0]
	}
	return err
}

// Flush flushes the frames written out since the last flush. The Session
// also flushes once before the first frame, to send the headers: that
// flush finds nothing written and is skipped, so that the headers leave
// with the first frame.
func (f *frameWriter) Flush() error {
	if !f.pending {
		return nil
	}
	f.pending = false
	return f.ResponseWriter.Flush()
}
