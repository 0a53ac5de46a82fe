//go:build unix

package relay_test

import (
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// deadURL returns the base URL of an upstream that refuses connections:
// a TCP socket bound to a port of the loopback interface and never
// listening. It stays bound for the test's life, so that no other server
// of the test binary can be given its port, as a closed httptest server's
// can (a "dead" upstream that answers). Connections are refused before
// anything is sent, as by a port nobody listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(t, err)
	syscall.CloseOnExec(fd)
	t.Cleanup(func() { syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	return "http://127.0.0.1:" + strconv.Itoa(sa.(*syscall.SockaddrInet4).Port) + "/v1"
}
