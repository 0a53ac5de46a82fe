package gateway

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/bytesem"
	"github.com/gatewaykit/gatewaykit/videos"
)

// Defaults of [BodyLimits], which [New] mounts.
const (
	// DefaultBodyReadTimeout is how long a client has to send a request's
	// body: 60 seconds.
	DefaultBodyReadTimeout = 60 * time.Second
	// DefaultMaxBodyBytesInFlight bounds the bytes of the request bodies
	// of all requests being served at once: 256 MiB (eight video requests
	// of the largest size allowed by default).
	DefaultMaxBodyBytesInFlight int64 = 256 << 20
)

// bodyRetryAfter is the Retry-After of the 503 of a full bound.
const bodyRetryAfter = time.Second

// BodyLimits are the limits that [LimitBodies] sets on request bodies.
// The zero value means the defaults.
type BodyLimits struct {
	// ReadTimeout bounds the time to read a request's body, from when the
	// handler is called to the body's last byte; 0 means
	// DefaultBodyReadTimeout, a negative value none.
	ReadTimeout time.Duration
	// MaxBytesInFlight bounds the bytes of the bodies of all the requests
	// being served at once; 0 means DefaultMaxBodyBytesInFlight, a
	// negative value no bound. Keep it above the largest body limit of
	// the handlers behind it, or their largest requests can never pass.
	MaxBytesInFlight int64
	// ErrorShape picks the wire shape of the 503 that LimitBodies writes
	// itself; nil means [ErrorShape].
	ErrorShape func(r *http.Request) apierrors.Shape
}

// LimitBodies returns middleware that bounds the time and the memory
// that request bodies take; [New] mounts it behind the auth middleware,
// with the limits of [Config]. Embedders that mount the endpoint packages
// themselves can mount it the same way. Requests without a body pass
// through untouched. The others are handed on with their Body replaced
// by the limited one while next serves them, and their own Body put back
// when next returns (the request itself, not a copy: a copy is the
// larger allocation). For them:
//
//   - Read deadline. The connection's read deadline is set to
//     ReadTimeout from now (with http.ResponseController, not
//     http.Server.ReadTimeout, which would also cut streamed replies), and
//     cleared as soon as the body has been read to its end (net/http's
//     HTTP/1 server clears it then as well), so a long stream that
//     follows is not cut. A body that has not arrived by then fails the
//     handler's read with a 408 request_timeout, which the handler
//     answers in its family's shape (the video create paths answer every
//     failure with a 400, as the spec has it); the connection is then
//     closed. Handlers must read the body before a long reply, as every
//     handler of this module does.
//   - Bytes in flight. A body's bytes count against MaxBytesInFlight from
//     the handler's start until it returns: the whole Content-Length at
//     once when the request declares one, else each chunk as it is read.
//     A request whose Content-Length does not fit is answered at once with
//     503 service_unavailable, Retry-After: 1, in the shape that
//     ErrorShape picks; a body without a Content-Length that outgrows the
//     room left fails the handler's read with the same error.
//
// The limit on the size of a single body is each handler's own
// (WithMaxRequestBytes). The returned middleware is safe for concurrent
// use.
func LimitBodies(l BodyLimits) func(http.Handler) http.Handler {
	if l.ReadTimeout == 0 {
		l.ReadTimeout = DefaultBodyReadTimeout
	}
	if l.MaxBytesInFlight == 0 {
		l.MaxBytesInFlight = DefaultMaxBodyBytesInFlight
	}
	if l.ErrorShape == nil {
		l.ErrorShape = ErrorShape
	}
	sem := bytesem.New(l.MaxBytesInFlight) // nil: no bound
	return func(next http.Handler) http.Handler {
		if next == nil {
			panic("gateway: LimitBodies: nil next Handler")
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			b := &limitedBody{rc: r.Body, sem: sem}
			if sem != nil && r.ContentLength > 0 && r.ContentLength <= sem.Max() {
				if !sem.TryAcquire(r.ContentLength) {
					// The body is not read: close the connection (an
					// HTTP/2 stream is reset) rather than wait for the
					// client to send it.
					if r.ProtoMajor == 1 {
						w.Header().Set("Connection", "close")
					}
					_ = http.NewResponseController(w).SetReadDeadline(time.Now())
					apierrors.Renderer{Shape: l.ErrorShape(r)}.Write(w, r, errBusy())
					return
				}
				b.held, b.prepaid = r.ContentLength, true
			}
			if l.ReadTimeout > 0 {
				ctl := http.NewResponseController(w)
				if ctl.SetReadDeadline(time.Now().Add(l.ReadTimeout)) == nil {
					b.ctl, b.timeout = ctl, l.ReadTimeout
				}
			}
			// The limited body replaces r's while next serves it, and r's
			// own is put back after, for the middlewares that gave r: no
			// copy of the request, which is the larger allocation.
			defer func(body io.ReadCloser) {
				r.Body = body
				b.finish()
			}(r.Body)
			r.Body = b
			next.ServeHTTP(w, r)
		})
	}
}

// ErrorShape is the error shape that clients of r's path expect: the
// flat shape on the video create paths, the messages-format and Google
// shapes on those formats' paths ([apierrors.ShapeFor]), and the
// general shape everywhere else.
func ErrorShape(r *http.Request) apierrors.Shape {
	if r.Method == http.MethodPost {
		p := strings.TrimSuffix(r.URL.Path, "/")
		for _, pat := range []string{videos.PatternCreate, videos.PatternMultimodal, videos.PatternMultimodalAlias} {
			if strings.HasSuffix(p, strings.TrimPrefix(pat, "POST ")) {
				return apierrors.Flat
			}
		}
	}
	return apierrors.ShapeFor(r)
}

func errBusy() *apierrors.Error {
	e := apierrors.New(apierrors.CodeServiceUnavailable, "The gateway is receiving too many request bodies at once; retry in a moment.")
	e.RetryAfter = bodyRetryAfter
	return e
}

func errBodyTimeout(d time.Duration, cause error) *apierrors.Error {
	return apierrors.New(apierrors.CodeRequestTimeout, fmt.Sprintf("The request body was not received within %s.", d)).WithCause(cause)
}

// limitedBody is a request body under [LimitBodies]. Read may be called
// from another goroutine than the handler's (a relay's transport); the
// bookkeeping is under mu, never the read itself.
type limitedBody struct {
	rc      io.ReadCloser
	sem     *bytesem.Sem
	timeout time.Duration

	mu      sync.Mutex
	ctl     *http.ResponseController // set while the read deadline is
	held    int64                    // bytes acquired from sem
	prepaid bool                     // held covers the whole body
	done    bool                     // the handler has returned
	err     error                    // a limit's error, sticky
}

func (b *limitedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := b.rc.Read(p)

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return n, err
	}
	if n > 0 && b.sem != nil && !b.prepaid {
		if !b.sem.TryAcquire(int64(n)) {
			b.err = errBusy()
			// The rest is not read: the server's discarding of it fails
			// at once, and the connection is closed.
			if b.ctl != nil {
				_ = b.ctl.SetReadDeadline(time.Now())
				b.ctl = nil
			}
			return 0, b.err
		}
		b.held += int64(n)
	}
	switch {
	case err == io.EOF:
		// The whole body is read: a stream that follows must not be cut
		// by the deadline.
		b.clearDeadlineLocked()
	case err != nil && b.timeout > 0 && isTimeout(err):
		// The deadline stays, so that the server's discarding of the
		// rest is bounded too, and the connection is closed.
		err = errBodyTimeout(b.timeout, err)
		b.err = err
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

func (b *limitedBody) clearDeadlineLocked() {
	if b.ctl != nil {
		_ = b.ctl.SetReadDeadline(time.Time{})
		b.ctl = nil
	}
}

// finish runs when the handler returns: the bytes go back to the
// semaphore. A deadline still set stays, so that the server's discarding
// of an unread body is bounded too; the server sets the connection's
// deadlines afresh for the next request.
func (b *limitedBody) finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done, b.ctl = true, nil
	if b.sem != nil {
		b.sem.Release(b.held)
		b.held = 0
	}
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
