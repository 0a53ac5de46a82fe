package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
	"unsafe"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/sse"
)

// openStream sends a streaming request with [Relay.Do] and returns the
// reply once it is known to be a stream: a status other than 200 is the
// client's error ([UpstreamError]), and a JSON reply where events were
// expected is a 502. Its body is paced by flush (see paced).
func (r *Relay) openStream(ctx context.Context, model string, build attemptBuild, flush func()) (*http.Response, *Upstream, error) {
	res, u, err := r.do(ctx, model, build)
	if err == nil {
		paced(res, flush)
	}
	return checkStream(res, u, err)
}

// paced makes each read of the body of res, the reply of [Relay.Do] to a
// streaming request, call flush first: the Flush of the stream's Params,
// by which the handler sends the client what it wrote of the events read
// before. The events of one read of the upstream then leave in one write
// to the client, as a byte-copying relay's would, and none waits for the
// next read.
func paced(res *http.Response, flush func()) {
	if b, ok := res.Body.(*body); ok {
		b.wait = flush
	}
}

// checkStream is openStream's check of the result of Relay.Do.
func checkStream(res *http.Response, u *Upstream, err error) (*http.Response, *Upstream, error) {
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, nil, upstreamErrorOf(res, u)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
		data, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		return nil, nil, malformed(u, "reply", errors.New("a JSON reply to a streaming request"), data)
	}
	return res, u, nil
}

// readEvents reads the SSE stream body, and calls fn with the data of each
// event until the "data: [DONE]" that ends it, or until fn returns false
// (the consumer has stopped) or an error. Comments (keep-alives) and
// events without data are skipped. data is the bytes of an immutable
// string: fn must not modify them, and may keep them (or strings that
// share them). The view saves a copy of every event (unsafe measured:
// one allocation per event; BENCHMARKS.md, JSON codecs).
//
// The stream is read in the caller's goroutine: the handler's, which
// writes each event before the next is read, and flushes before each
// read of the upstream (see paced).
//
// A stream that ends without [DONE], that cannot be read, or that carries
// an event named "error" is a 502; an idle timeout is a 504, and the
// client's departure is the context's error (both from the reply's
// body).
func readEvents(body io.Reader, u *Upstream, fn func(data []byte) (bool, error)) error {
	for ev, err := range sse.Read(body) {
		if err != nil {
			return streamReadError(err, u)
		}
		if ev.Type == "error" {
			return streamError(u, json.RawMessage(ev.Data))
		}
		if ev.Data == "" {
			continue
		}
		if ev.IsDone() {
			return nil
		}
		more, err := fn(unsafe.Slice(unsafe.StringData(ev.Data), len(ev.Data)))
		if err != nil || !more {
			return err
		}
	}
	return apierrors.BadGateway("The upstream's stream ended early.",
		fmt.Errorf("relay: upstream %s: the stream ended without [DONE]", u.Name))
}

// yieldEvents reads the stream body of u with readEvents, handing the
// data of each event to event (which yields the deltas it makes of it),
// then yields the stream's error, if any; then it drains what is left of
// the stream (finishStream).
func yieldEvents[D any](body io.ReadCloser, u *Upstream, event func(data []byte) (bool, error), yield func(D, error) bool) {
	if err := readEvents(body, u, event); err != nil {
		var zero D
		yield(zero, err)
		return
	}
	finishStream(body)
}

// streamReadError is the error of a failed read of an upstream stream.
func streamReadError(err error, u *Upstream) error {
	if apierrors.Has(err) || isContextError(err) {
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
