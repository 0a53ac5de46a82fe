package gateway

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// The limits that [NewServer] and the example programs put on every
// client connection, so that idle, slow or oversized clients cannot hold
// the server's memory and file descriptors. Change a field of the
// returned http.Server, or pass another n to [LimitListener], to change
// one.
const (
	// DefaultReadHeaderTimeout bounds the time a client may take to send
	// a request's headers (a slowloris client is cut off after it).
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout closes a keep-alive connection that has waited
	// this long for its next request. Without it, net/http keeps idle
	// connections open for ever.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxHeaderBytes bounds a request's header: 64 KiB, far more
	// than an API key (at most 256 bytes) and the headers of the SDKs
	// need, and a sixteenth of net/http's default of 1 MiB. A larger
	// header is answered 431 Request Header Fields Too Large.
	DefaultMaxHeaderBytes = 64 << 10
	// DefaultMaxConns is the number of connections that the example
	// programs serve at once ([LimitListener]): idle keep-alive ones,
	// streams and requests in flight alike.
	DefaultMaxConns = 1024
)

// NewServer returns an http.Server for h on addr with the limits above:
// ReadHeaderTimeout [DefaultReadHeaderTimeout], IdleTimeout
// [DefaultIdleTimeout] and MaxHeaderBytes [DefaultMaxHeaderBytes]. Use it
// with [LimitListener] to bound connections as well:
//
//	l, err := net.Listen("tcp", addr)
//	…
//	srv := gateway.NewServer(addr, g)
//	err = srv.Serve(gateway.LimitListener(l, gateway.DefaultMaxConns))
//
// It leaves ReadTimeout and WriteTimeout unset on purpose: they bound a
// whole request or reply, and would cut the event streams of chat,
// completions and responses, which last as long as the model writes.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: DefaultReadHeaderTimeout,
		IdleTimeout:       DefaultIdleTimeout,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
	}
}

// LimitListener returns a listener that holds at most n of l's
// connections open at once. When n are open, Accept waits for one to
// close, and new clients wait in the kernel's accept queue (which refuses
// them once it is full) instead of taking a file descriptor each. Closing
// the listener ends a waiting Accept. LimitListener panics if n < 1.
//
// It is golang.org/x/net/netutil.LimitListener's behaviour, written here
// so that the module does not depend on x/net for thirty lines.
func LimitListener(l net.Listener, n int) net.Listener {
	if n < 1 {
		panic("gateway: LimitListener: n < 1")
	}
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{} // one token per open connection
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, sem: l.sem}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its token back when it is first closed.
type limitConn struct {
	net.Conn
	sem       chan struct{}
	closeOnce sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { <-c.sem })
	return err
}
