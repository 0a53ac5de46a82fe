package relay

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/mediareply"
	"github.com/gatewaykit/gatewaykit/sse"
)

// replyHeaders are the headers of an upstream reply that reach the client,
// besides the status. Hop-by-hop headers, cookies and the upstream's own
// rate-limit headers (the gateway sends its own) never do.
var replyHeaders = [...]string{
	"Content-Type",
	"Content-Encoding",
	"Content-Disposition",
	"Content-Language",
	"Cache-Control",
	"X-Request-Id",
	"Request-Id", // the messages format's request id
}

// copyBufPool holds the buffers of reply copies.
var copyBufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// reply sends the upstream reply res to the client: a non-2xx status as
// the client's error (returned, for the caller to render in the format's
// shape), an event stream event by event, anything else as it comes.
func (h *accessHandler) reply(w http.ResponseWriter, r *http.Request, f format, res *http.Response, u *Upstream) error {
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return UpstreamError(res, u)
	}
	defer res.Body.Close()
	for _, k := range replyHeaders {
		if vs := res.Header[k]; len(vs) > 0 {
			w.Header()[k] = vs
		}
	}
	var usage usageScanner
	defer func() { h.charge(r.Context(), u, &usage.usage) }()
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		return h.relayStream(w, r, f, res, u, &usage)
	}
	// The bytes are the upstream's: they must not become a page on the
	// gateway's origin.
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		mediareply.Protect(w.Header())
		return h.relayBody(w, r, res, &usage)
	}
	replyTypes.Set(w.Header(), res.Header.Get("Content-Type"))
	return h.relayBody(w, r, res, nil)
}

// replyTypes are the media types of the replies that the access points
// pass through as they are, besides JSON and event streams: speech
// audio, images, and the text and subtitles of transcriptions. Any other
// reply is sent as application/octet-stream with Content-Disposition:
// attachment; every reply but an event stream with
// X-Content-Type-Options: nosniff and Content-Security-Policy: sandbox
// (internal/mediareply).
var replyTypes = slices.Concat(mediareply.Types{"text/plain", "text/vtt", "application/x-subrip"}, mediareply.Audio, mediareply.Image)

// relayBody copies a reply body to the client as it arrives. A reply of
// unknown length (chunked: a stream, or audio generated on the fly) is
// flushed after every read, so the client gets each piece at once.
//
// The status is sent with the first bytes, so a reply that fails before
// any byte arrives is still answered with a real error. One that fails
// later cannot be: the handler then aborts the connection (panicking with
// http.ErrAbortHandler, as httputil.ReverseProxy does), so that the client
// sees a broken transfer rather than a body that looks complete.
//
// A non-nil usage scans the body as it passes.
func (h *accessHandler) relayBody(w http.ResponseWriter, r *http.Request, res *http.Response, usage *usageScanner) error {
	bp := copyBufPool.Get().(*[]byte)
	defer copyBufPool.Put(bp)
	buf := *bp
	flush := res.ContentLength < 0
	rc := http.NewResponseController(w)
	started := false
	start := func() {
		started = true
		if res.ContentLength >= 0 && !res.Uncompressed {
			w.Header().Set("Content-Length", strconv.FormatInt(res.ContentLength, 10))
		}
		w.WriteHeader(res.StatusCode)
	}
	for {
		n, err := res.Body.Read(buf)
		if n > 0 {
			if !started {
				start()
			}
			if usage != nil {
				_, _ = usage.Write(buf[:n])
			}
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil // the client has gone
			}
			if flush {
				_ = rc.Flush()
			}
		}
		switch {
		case err == nil:
			continue
		case err == io.EOF:
			if !started {
				start()
			}
			return nil
		case !started:
			return brokenReply(err)
		case r.Context().Err() != nil:
			return nil // the client has gone
		}
		h.logger.LogAttrs(r.Context(), slog.LevelError, "relay: upstream reply broke off; aborting the client connection",
			slog.String("path", r.URL.Path), slog.String("error", err.Error()))
		panic(http.ErrAbortHandler)
	}
}

// relayStream passes an upstream event stream through, event by event
// ([sse.Read] and [sse.Stream.SendEvent]): each event is flushed as it
// comes, keep-alive comments bridge long silences, and a stream that
// breaks off ends with an error event in the format's shape. An event
// that carries an error (an "error" event, or an "error" member) goes
// through [Redact] first.
func (h *accessHandler) relayStream(w http.ResponseWriter, r *http.Request, f format, res *http.Response, u *Upstream, usage *usageScanner) error {
	s, err := sse.Start(w, r, sse.WithKeepAlive(h.cfg.keepAlive), sse.WithRenderer(h.renderer(f)))
	if err != nil {
		return apierrors.Internal(err)
	}
	defer s.Close()
	for ev, err := range sse.Read(res.Body) {
		if err != nil {
			h.streamError(r, s, f, brokenReply(err))
			return nil
		}
		if ev.Type == "error" || strings.Contains(ev.Data, `"error"`) {
			ev.Data = Redact(ev.Data, u.Key)
		}
		if s.SendEvent(ev) != nil {
			return nil // the client has gone
		}
		usage.scanEvent(ev.Type, ev.Data)
	}
	return nil
}

// streamError ends s with err: before the first event as a JSON error,
// after it as one error event in the format's shape — the general
// {"error":{…}} for the OpenAI format, an "error" event carrying the
// messages-format envelope, or Google's error object.
func (h *accessHandler) streamError(r *http.Request, s *sse.Stream, f format, err error) {
	if f == formatOpenAI || !s.Started() {
		_ = s.Error(err)
		return
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client has gone
	}
	e := apierrors.From(err)
	h.logger.LogAttrs(r.Context(), slog.LevelError, "relay: upstream stream failed",
		slog.String("path", r.URL.Path), slog.String("error", e.Error()))
	switch f {
	case formatMessages:
		_ = s.SendJSON("error", apierrors.MessagesBodyOf(e))
	case formatGemini:
		_ = s.Send(apierrors.GoogleBodyOf(e))
	}
}

// brokenReply is the client's error for a reply body that failed: the
// relay's own (an idle timeout's 504), the client's departure as it is,
// and anything else a 502.
func brokenReply(err error) error {
	var e *apierrors.Error
	if errors.As(err, &e) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return apierrors.BadGateway("The upstream's reply broke off.", err)
}
