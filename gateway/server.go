package gateway

import (
	"container/list"
	"crypto/tls"
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
	// streams and requests in flight alike (idle ones give way to new
	// clients when all are open).
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
// Its ConnState tells a LimitListener which of its connections are idle
// (keep-alive connections between requests), so that those give way to
// new clients when all n are open: keep it if you change the server's
// fields, and call it from a ConnState of your own.
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
		ConnState:         trackConnState,
	}
}

// LimitListener returns a listener that holds at most n of l's
// connections open at once, so that clients cannot take a file
// descriptor and a goroutine each without bound. LimitListener panics if
// n < 1. Closing the listener ends a waiting Accept.
//
// When all n are open, Accept takes the next client from l (one more
// connection, n+1 at most) and makes room for it: it closes the
// connection that has been idle longest — a keep-alive connection waiting
// for its next request, as the server made by [NewServer] reports them —
// or, when none is idle (every one carries a request or a stream), waits
// for one to close or to fall idle. Further clients wait in the kernel's
// accept queue (which refuses them once it is full). So a flood of idle
// connections cannot keep a new client, a health check among them, from
// being served, while requests and streams in progress are never cut. A
// client that sends its next request on an idle connection just as it is
// closed sees it closed, as when the server's IdleTimeout closes it; the
// HTTP clients retry such a request on a new connection when it is safe
// to. Without NewServer's ConnState, no connection is known to be idle,
// and Accept waits for one to close.
//
// It is golang.org/x/net/netutil.LimitListener's bound, written here so
// that the module does not depend on x/net, with idle connections giving
// way to new ones, as nginx's do when its worker_connections run out.
func LimitListener(l net.Listener, n int) net.Listener {
	if n < 1 {
		panic("gateway: LimitListener: n < 1")
	}
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{}), fell: make(chan struct{}, 1)}
}

type limitListener struct {
	net.Listener
	sem       chan struct{} // one token per open connection
	done      chan struct{} // closed by Close
	closeOnce sync.Once
	fell      chan struct{} // poked when a connection falls idle

	mu   sync.Mutex
	idle list.List // of *limitConn, idle longest first
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
		c, err := l.Listener.Accept()
		if err != nil {
			<-l.sem
			return nil, err
		}
		return &limitConn{Conn: c, l: l}, nil
	case <-l.done:
		return nil, net.ErrClosed
	default:
	}
	// All n are open: take the next client, then make room for it.
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		if l.closeIdlest() {
			// Its slot is free, unless another Accept took it.
			select {
			case l.sem <- struct{}{}:
				return &limitConn{Conn: c, l: l}, nil
			default:
				continue
			}
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, l: l}, nil
		case <-l.fell:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// closeIdlest closes the connection idle longest, if any, and reports
// whether it did.
func (l *limitListener) closeIdlest() bool {
	l.mu.Lock()
	e := l.idle.Front()
	if e == nil {
		l.mu.Unlock()
		return false
	}
	c := l.idle.Remove(e).(*limitConn)
	c.elem = nil
	l.mu.Unlock()
	c.Close()
	return true
}

// limitConn gives its token back when it is first closed.
type limitConn struct {
	net.Conn
	l         *limitListener
	closeOnce sync.Once
	elem      *list.Element // in l.idle while idle; under l.mu
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() {
		c.setIdle(false)
		<-c.l.sem
	})
	return err
}

// setIdle records whether c waits for its next request.
func (c *limitConn) setIdle(idle bool) {
	l := c.l
	l.mu.Lock()
	switch {
	case idle && c.elem == nil:
		c.elem = l.idle.PushBack(c)
	case !idle && c.elem != nil:
		l.idle.Remove(c.elem)
		c.elem = nil
	}
	l.mu.Unlock()
	if idle {
		select {
		case l.fell <- struct{}{}:
		default:
		}
	}
}

// trackConnState is the ConnState of [NewServer]: it tells the
// connections of a [LimitListener] when they are idle.
func trackConnState(c net.Conn, state http.ConnState) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if lc, ok := c.(*limitConn); ok {
		lc.setIdle(state == http.StateIdle)
	}
}
