package gateway_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
)

// wait bounds every wait for a behaviour; nothing here asserts a time.
const wait = 10 * time.Second

// serve runs srv on a loopback port, through LimitListener when maxConns
// is positive, and returns its address.
func serve(t *testing.T, srv *http.Server, maxConns int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	if maxConns > 0 {
		l = gateway.LimitListener(l, maxConns)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return l.Addr().String()
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })

// roundTrip writes a keep-alive GET with the extra header lines on c and
// reads the reply.
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, extra string) *http.Response {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(wait)))
	_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: gateway\r\n"+extra+"\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res
}

func TestNewServerSetsTheLimits(t *testing.T) {
	t.Parallel()
	srv := gateway.NewServer("127.0.0.1:8080", hello)
	require.Equal(t, "127.0.0.1:8080", srv.Addr)
	require.Equal(t, gateway.DefaultReadHeaderTimeout, srv.ReadHeaderTimeout)
	require.Equal(t, gateway.DefaultIdleTimeout, srv.IdleTimeout)
	require.Equal(t, gateway.DefaultMaxHeaderBytes, srv.MaxHeaderBytes)
	require.Positive(t, srv.IdleTimeout)
	require.Zero(t, srv.ReadTimeout, "a read timeout would cut streams")
	require.Zero(t, srv.WriteTimeout, "a write timeout would cut streams")
}

// TestServerClosesIdleConnections: a keep-alive connection that sends
// nothing after its request is closed by the server (here after a short
// IdleTimeout), instead of being held for ever.
func TestServerClosesIdleConnections(t *testing.T) {
	t.Parallel()
	srv := gateway.NewServer("", hello)
	srv.IdleTimeout = 50 * time.Millisecond
	addr := serve(t, srv, 0)

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	br := bufio.NewReader(c)
	res := roundTrip(t, c, br, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.False(t, res.Close, "the connection is kept alive")

	require.NoError(t, c.SetReadDeadline(time.Now().Add(wait)))
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the server closed the idle connection")
}

// TestServerRefusesLargeHeaders: a header over MaxHeaderBytes is answered
// 431, not buffered up to net/http's default of 1 MiB.
func TestServerRefusesLargeHeaders(t *testing.T) {
	t.Parallel()
	addr := serve(t, gateway.NewServer("", hello), 0)
	tests := []struct {
		name   string
		size   int
		status int
	}{
		{"an API key", 256, http.StatusOK},
		{"a large cookie", 16 << 10, http.StatusOK},
		{"twice the limit", 2 * gateway.DefaultMaxHeaderBytes, http.StatusRequestHeaderFieldsTooLarge},
		{"the attack's 1 MB", 1 << 20, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer c.Close()
			res := roundTripLenient(t, c, "X-Padding: "+strings.Repeat("a", tc.size)+"\r\n")
			require.Equal(t, tc.status, res.StatusCode)
		})
	}
}

// roundTripLenient is roundTrip for a request that the server may answer
// before reading it whole: a write error after the reply is ignored.
func roundTripLenient(t *testing.T, c net.Conn, extra string) *http.Response {
	t.Helper()
	require.NoError(t, c.SetDeadline(time.Now().Add(wait)))
	go func() { _, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: gateway\r\n"+extra+"\r\n") }()
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	return res
}

// TestLimitListenerHoldsConnectionsBeyondTheLimit: with a limit of one,
// a second client is not served while the first holds its connection,
// and is served as soon as the first closes it.
func TestLimitListenerHoldsConnectionsBeyondTheLimit(t *testing.T) {
	t.Parallel()
	addr := serve(t, gateway.NewServer("", hello), 1)

	first, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, roundTrip(t, first, bufio.NewReader(first), "").StatusCode)

	second, err := net.Dial("tcp", addr) // queued by the kernel
	require.NoError(t, err)
	defer second.Close()
	_, err = io.WriteString(second, "GET / HTTP/1.1\r\nHost: gateway\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(second)
	require.NoError(t, second.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err = br.ReadByte()
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "not served while the first connection is open")

	require.NoError(t, first.Close())
	require.NoError(t, second.SetReadDeadline(time.Now().Add(wait)))
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "served once the first connection closed")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, res.Body.Close())
}

// TestLimitListenerClose: Close ends an Accept that waits for a free
// slot, and every connection gives its slot back once, however often it
// is closed.
func TestLimitListenerClose(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := gateway.LimitListener(inner, 1)

	dialed := make(chan net.Conn, 2)
	for range 2 {
		go func() {
			c, err := net.Dial("tcp", inner.Addr().String())
			if err == nil {
				dialed <- c
			}
		}()
	}
	c, err := l.Accept()
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_ = c.Close() // a second Close gives back nothing more
	c, err = l.Accept()
	require.NoError(t, err, "the slot came back")

	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept() // waits: c holds the only slot
		accepted <- err
	}()
	require.NoError(t, l.Close())
	select {
	case err := <-accepted:
		require.True(t, errors.Is(err, net.ErrClosed), "%v", err)
	case <-time.After(wait):
		t.Fatal("Close did not end the waiting Accept")
	}
	require.NoError(t, c.Close())
	for range 2 {
		(<-dialed).Close()
	}
}

func TestLimitListenerPanicsOnNoConnections(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "gateway: LimitListener: n < 1", func() { gateway.LimitListener(nil, 0) })
}
