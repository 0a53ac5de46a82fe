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

// blocking serves "hello" on / once release is closed (or the request
// ends), and tells started of each request it holds.
func blocking(started chan<- struct{}, release <-chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			started <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		io.WriteString(w, "hello")
	})
}

// get sends GET / on c and returns the reply's status, or the error, for
// a goroutine of its own.
func get(c net.Conn) string {
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return err.Error()
	}
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: gateway\r\n\r\n"); err != nil {
		return err.Error()
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err.Error()
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return err.Error()
	}
	return res.Status
}

// TestLimitListenerHoldsConnectionsBeyondTheLimit: with a limit of one,
// a second client is not served while the first holds its connection
// with a request in progress, and is served as soon as the first's
// request ends (its connection falls idle, and gives way).
func TestLimitListenerHoldsConnectionsBeyondTheLimit(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	addr := serve(t, gateway.NewServer("", blocking(started, release)), 1)

	first, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer first.Close()
	firstReply := make(chan string, 1)
	go func() { firstReply <- get(first) }()
	<-started

	second, err := net.Dial("tcp", addr) // accepted, or queued by the kernel
	require.NoError(t, err)
	defer second.Close()
	_, err = io.WriteString(second, "GET /other HTTP/1.1\r\nHost: gateway\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(second)
	require.NoError(t, second.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	_, err = br.ReadByte()
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "not served while the first connection carries a request")

	close(release)
	require.Equal(t, "200 OK", <-firstReply, "the request in progress is never cut")
	require.NoError(t, second.SetReadDeadline(time.Now().Add(wait)))
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "served once the first connection fell idle")
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, res.Body.Close())
}

// TestHealthAnswersUnderAFloodOfIdleConnections: when idle keep-alive
// connections hold every slot of a LimitListener (and more wait behind
// them), /healthz still answers: idle connections give way to new ones,
// the longest idle first. Before, the health check waited for an idle
// connection to time out (DefaultIdleTimeout).
func TestHealthAnswersUnderAFloodOfIdleConnections(t *testing.T) {
	t.Parallel()
	const n = 4
	addr := serve(t, gateway.NewServer("", newDemo(t, nil)), n)

	// n keep-alive connections, each left idle after one request, and
	// 2n more behind them, their requests sent.
	for i := range 3 * n {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		_, err = io.WriteString(c, "GET "+gateway.HealthPath+" HTTP/1.1\r\nHost: gateway\r\n\r\n")
		require.NoError(t, err)
		if i >= n {
			continue
		}
		require.NoError(t, c.SetDeadline(time.Now().Add(wait)))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.False(t, res.Close, "kept alive")
		require.NoError(t, res.Body.Close())
	}

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+gateway.HealthPath, nil)
	require.NoError(t, err)
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}

// TestLimitListenerClosesTheIdlestConnection: a new client takes the
// slot of the connection idle longest; a connection carrying a request
// is never closed for it.
func TestLimitListenerClosesTheIdlestConnection(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}, 1), make(chan struct{})
	srv := gateway.NewServer("", blocking(started, release))
	// The listener ranks connections by the time the server saw them fall
	// idle, which may come after their client has read the reply: each
	// idle() waits for it, so that older is idle before newer.
	track, idled := srv.ConnState, make(chan struct{}, 8)
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		track(c, s)
		if s == http.StateIdle {
			idled <- struct{}{}
		}
	}
	addr := serve(t, srv, 3)

	// busy carries a request; older and newer fall idle in turn.
	busy, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer busy.Close()
	busyReply := make(chan string, 1)
	go func() { busyReply <- get(busy) }()
	<-started
	idle := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		br := bufio.NewReader(c)
		require.NoError(t, c.SetDeadline(time.Now().Add(wait)))
		_, err = io.WriteString(c, "GET /idle HTTP/1.1\r\nHost: gateway\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		require.NoError(t, res.Body.Close())
		<-idled
		return c, br
	}
	older, olderR := idle()
	newer, newerR := idle()

	fresh, _ := idle() // takes older's slot
	require.NotNil(t, fresh)
	require.NoError(t, older.SetReadDeadline(time.Now().Add(wait)))
	_, err = olderR.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the idlest connection was closed")

	// newer is still open: it serves another request.
	_, err = io.WriteString(newer, "GET /idle HTTP/1.1\r\nHost: gateway\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(newerR, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, res.Body.Close())

	close(release)
	require.Equal(t, "200 OK", <-busyReply, "the request in progress is never cut")
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
