// Package listenaddr reads the -addr flag of the example programs and
// names the address that a listener is bound to as a URL a browser can
// open.
package listenaddr

import (
	"net"
	"strconv"
)

// Normalize returns addr in the form net.Listen reads: a bare port
// ("8080") becomes ":8080", every interface on that port, as ":8080"
// means; anything else is returned as it is.
func Normalize(addr string) string {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return ":" + addr
	}
	return addr
}

// URL returns the http URL of a listener's address: "http://" and the
// host and port, with the loopback address 127.0.0.1 in place of an
// unspecified one (0.0.0.0 or ::), which a browser cannot open.
func URL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
