package listenaddr_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/listenaddr"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"8080", ":8080"},
		{"0", ":0"},
		{":8080", ":8080"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"localhost:9000", "localhost:9000"},
		{"[::1]:8080", "[::1]:8080"},
		{"99999", "99999"}, // not a port: net.Listen explains
		{"", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, listenaddr.Normalize(tc.in), tc.in)
	}
}

func TestURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}, "http://127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8080}, "http://127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}, "http://127.0.0.1:8080"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 9000}, "http://[::1]:9000"},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 80}, "http://10.0.0.7:80"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, listenaddr.URL(tc.addr), tc.addr.String())
	}
}
