// Package outagetest simulates, in tests, the outage of a server that a
// gateway depends on (PostgreSQL, Redis) without stopping the server,
// which other tests share: a TCP proxy in front of it that the test cuts.
package outagetest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards the TCP connections made to [Proxy.Addr] to a target
// server until [Proxy.Cut]. It is safe for concurrent use.
type Proxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	conns []net.Conn
	cut   bool
	wg    sync.WaitGroup
}

// New starts a proxy to target (host:port) on a port of the loopback
// interface; it is cut when t ends.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("outagetest: listening: %v", err)
	}
	p := &Proxy{l: l, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Cut)
	return p
}

// Addr is the host:port that clients dial instead of the target's.
func (p *Proxy) Addr() string { return p.l.Addr().String() }

// Cut starts the outage: the proxy stops listening, so that new
// connections are refused, and closes every connection it forwards, as a
// server that went away would. It returns once the proxy has stopped; it
// may be called more than once.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	_ = p.l.Close()
	for _, c := range conns {
		_ = c.Close()
	}
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.l.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// track records in and out, or closes them if the proxy is cut.
func (p *Proxy) track(in, out net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		_ = in.Close()
		_ = out.Close()
		return false
	}
	p.conns = append(p.conns, in, out)
	return true
}

// pipe copies src to dst until either ends, then closes both.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = src.Close()
	_ = dst.Close()
}
