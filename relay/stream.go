package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/sse"
)

// openStream sends a streaming request with [Relay.Do] and returns the
// reply once it is known to be a stream: a status other than 200 is the
// client's error ([UpstreamError]), and a JSON reply where events were
// expected is a 502.
func (r *Relay) openStream(ctx context.Context, model string, build func(u *Upstream) (*http.Request, error)) (*http.Response, *Upstream, error) {
	res, u, err := r.Do(ctx, model, build)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, nil, UpstreamError(res, u)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
		data, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		return nil, nil, malformed(u, "reply", errors.New("a JSON reply to a streaming request"), data)
	}
	return res, u, nil
}

// eventQueue is the number of upstream events that the reader goroutine
// of readEvents may hold ahead of the stream that consumes them.
const eventQueue = 16

// readEvents reads the SSE stream body, and calls fn with the data of each
// event until the "data: [DONE]" that ends it, or until fn returns false
// (the consumer has stopped) or an error. Comments (keep-alives) and
// events without data are skipped. data is the bytes of an immutable
// string: fn must not modify them, and may keep them (or strings that
// share them).
//
// The stream is read and parsed by a goroutine of its own, which hands
// the events (immutable strings: they need no copy) to the caller over a
// small buffered channel, so that the caller knows when another event is
// already at hand: the streams then yield their deltas with More set,
// and the handler flushes a burst of them once. Before it would wait for
// the upstream (no event at hand), readEvents calls idle, where the
// streams yield a delta without More that flushes what they left
// unflushed; idle returns false if the consumer has stopped. When
// readEvents returns, the goroutine has ended, so that the caller may
// read body again (finishStream) or close it.
//
// A stream that ends without [DONE], that cannot be read, or that carries
// an event named "error" is a 502; an idle timeout is a 504, and the
// client's departure is the context's error (both from the reply's
// body).
func readEvents(body io.ReadCloser, u *Upstream, fn func(data []byte) (bool, error), idle func() bool) error {
	r := startReader(body)
	err := r.consume(u, fn, idle)
	r.stop(err == nil)
	return err
}

// consume is the loop of readEvents.
func (r *eventReader) consume(u *Upstream, fn func(data []byte) (bool, error), idle func() bool) error {
	for {
		// Only this goroutine receives, so an event in the channel now is
		// still there for the receive: a plain length check, cheaper
		// than a select with a default, per event.
		if len(r.events) == 0 && !idle() {
			return nil
		}
		ev, ok := <-r.events
		if !ok {
			if r.err != nil {
				return streamReadError(r.err, u)
			}
			return apierrors.BadGateway("The upstream's stream ended early.",
				fmt.Errorf("relay: upstream %s: the stream ended without [DONE]", u.Name))
		}
		if ev.Type == "error" {
			return streamError(u, json.RawMessage(ev.Data))
		}
		if ev.IsDone() {
			return nil
		}
		more, err := fn(unsafe.Slice(unsafe.StringData(ev.Data), len(ev.Data)))
		if err != nil || !more {
			return err
		}
	}
}

// moreHint decides the More hint of the deltas that a relayed stream
// yields. A delta says More when it carries a usage, the running estimate
// or the upstream's report: every delta does, until the upstream reports
// its usage. The handler then leaves its events unflushed, and readEvents
// calls idle before it waits for the upstream: idle yields the last usage
// again, alone and without More, a delta that sends nothing and flushes
// what is pending. So a burst of upstream events that arrived together
// costs one flush, and an event that arrived alone is flushed before the
// relay waits for the next. The first delta of a stream never says More,
// so that the client's first event goes out at once (time to first
// token), and neither does a delta without a usage: idle would have
// nothing harmless to yield after it.
type moreHint[U any] struct {
	last    *U   // the usage of the last delta that said More
	pending bool // the last delta said More, and no flush followed
	started bool // a delta was yielded
}

// set returns the More hint of a delta with usage u, which may be nil.
func (h *moreHint[U]) set(u *U) bool {
	h.pending = u != nil && h.started
	h.started = true
	if h.pending {
		h.last = u
	}
	return h.pending
}

// owed returns the usage to yield to flush, and whether a flush is owed.
func (h *moreHint[U]) owed() (*U, bool) {
	if !h.pending {
		return nil, false
	}
	h.pending = false
	return h.last, true
}

// eventReader is the goroutine of readEvents: it reads the events of an
// upstream stream into a channel, until [DONE], an "error" event, the end
// of the stream or an error, or until it is told to stop.
type eventReader struct {
	body    io.ReadCloser
	events  chan sse.Event // closed when the goroutine ends
	quit    chan struct{}  // closed to stop the goroutine
	stopped atomic.Bool    // set before quit is closed
	err     error          // the read error, set before events is closed
}

func startReader(body io.ReadCloser) *eventReader {
	r := &eventReader{body: body, events: make(chan sse.Event, eventQueue), quit: make(chan struct{})}
	go r.run()
	return r
}

func (r *eventReader) run() {
	defer close(r.events)
	first := true
	for ev, err := range sse.Read(r.body) {
		if err != nil {
			r.err = err
			return
		}
		if ev.Data == "" && ev.Type != "error" {
			continue
		}
		if r.stopped.Load() {
			return
		}
		if len(r.events) < cap(r.events) {
			// Only this goroutine sends, so there is room: a plain
			// send, cheaper than a select, per event.
			r.events <- ev
		} else {
			select {
			case r.events <- ev:
			case <-r.quit:
				return
			}
		}
		if first {
			// Let the stream send the first event (time to first token)
			// before this goroutine reads ahead: it would otherwise
			// parse up to eventQueue events of a burst before the stream
			// runs. Measured with the load tool at one client, this takes
			// ~35 µs off the relay's added time to first byte.
			first = false
			runtime.Gosched()
		}
		if ev.IsDone() || ev.Type == "error" {
			return // the end: the caller reads the rest (finishStream)
		}
	}
}

// stop ends the goroutine and waits for it. After an error the body is
// closed under it at once, which ends its read. Otherwise (the stream
// ended, or the consumer stopped) a goroutine that is waiting for the
// upstream gets drainTimeout to see the end of the reply, so that the
// connection can be reused (see finishStream); then the body is closed.
func (r *eventReader) stop(drain bool) {
	r.stopped.Store(true)
	close(r.quit)
	if !drain {
		r.body.Close()
	}
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	for {
		select {
		case _, ok := <-r.events:
			if !ok {
				return
			}
		case <-t.C:
			r.body.Close()
			for range r.events {
			}
			return
		}
	}
}

// streamReadError is the error of a failed read of an upstream stream.
func streamReadError(err error, u *Upstream) error {
	if isAPIError(err) || isContextError(err) {
		return err
	}
	return apierrors.BadGateway("The upstream's stream could not be read.", fmt.Errorf("relay: upstream %s: %w", u.Name, err))
}

// isError reports whether raw, the "error" member of an event, holds an
// error (not absent, not null).
func isError(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// streamError is the 502 for an error that an upstream sent inside its
// stream. Its text goes to the log only, like that of a 5xx.
func streamError(u *Upstream, raw json.RawMessage) error {
	return apierrors.BadGateway("The upstream failed in the middle of the reply.",
		fmt.Errorf("relay: upstream %s sent an error event: %s", u.Name, snippet(raw, u.Key)))
}

// drainTimeout bounds the wait for the end of an upstream reply whose
// last event has been read.
const drainTimeout = 100 * time.Millisecond

// finishStream reads what is left of a stream whose last event has been
// handled (the end of the chunked body, usually already on its way), so
// that the connection goes back to the pool instead of being closed. It
// waits at most drainTimeout for it, and reads at most 4 KiB.
func finishStream(rc io.ReadCloser) {
	if b, ok := rc.(*body); ok {
		b.idle = min(b.idle, drainTimeout)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(rc, 4<<10))
}
