package relay

import (
	"errors"
	"io"
	"net/http"
	"sync"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// errStaleAttempt is what a failed attempt's body returns if its transport
// still reads after the next attempt began.
var errStaleAttempt = errors.New("relay: request body handed to another upstream")

// streamBody is a request body streamed from the client to an upstream as
// the upstream reads it, never held whole. It can be sent once: an
// attempt that read any of it leaves too little for another upstream, so
// [streamBody.attempt] refuses a second upstream once the first has read.
// An attempt that never read (its upstream could not be reached) leaves it
// whole, and the next upstream gets all of it.
type streamBody struct {
	newSrc func(u *Upstream) io.Reader // the body for one upstream; called only while nothing was read

	mu      sync.Mutex
	current *attemptBody
	read    bool  // some attempt has read
	err     error // the first read error other than io.EOF
}

func newStreamBody(newSrc func(u *Upstream) io.Reader) *streamBody {
	return &streamBody{newSrc: newSrc}
}

// attempt returns the body of the attempt at u, or a 502 if an earlier
// attempt has read some of it.
func (s *streamBody) attempt(u *Upstream) (io.Reader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.read {
		return nil, apierrors.BadGateway("The upstream failed after the request body was sent to it, and a streamed body cannot be sent again to another upstream.", errors.New("relay: streamed request body already read"))
	}
	a := &attemptBody{s: s, src: s.newSrc(u)}
	s.current = a
	return a, nil
}

// tooLarge reports whether reading the client's body hit the size limit.
func (s *streamBody) tooLarge() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mbe *http.MaxBytesError
	return errors.As(s.err, &mbe)
}

// attemptBody is the body of one attempt. It is never closed by the
// transport in a way that matters: the client's body belongs to the
// server, which closes it after the handler.
type attemptBody struct {
	s   *streamBody
	src io.Reader
}

func (a *attemptBody) Read(p []byte) (int, error) {
	s := a.s
	s.mu.Lock()
	if s.current != a {
		s.mu.Unlock()
		return 0, errStaleAttempt
	}
	s.read = true
	s.mu.Unlock()
	n, err := a.src.Read(p)
	if err != nil && err != io.EOF {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
	return n, err
}
