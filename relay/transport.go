package relay

import (
	"net"
	"net/http"
	"time"
)

// NewTransport returns the tuned transport that a [Relay] uses by default
// (one per Relay, shared by all its upstream calls), with the default
// connect timeout ([DefaultConnectTimeout]). It is exported for embedders
// who wrap it (for tracing, say) and hand it back with [WithTransport].
//
// Its settings, and why:
//
//   - Keep-alive pool: MaxIdleConnsPerHost 256 and MaxIdleConns 1024. A
//     relay sends many concurrent requests to a handful of hosts; Go's
//     default of 2 idle connections per host would close and re-dial
//     nearly every connection under load (paying a TCP and TLS handshake
//     each time and piling up TIME_WAIT sockets). 256 covers a few hundred
//     requests in flight per upstream host. MaxConnsPerHost is not capped:
//     a gateway must not queue requests behind a connection limit of its
//     own; the upstream's rate limits (429) are the real bound.
//   - Idle connections are closed after 90 seconds, below the idle
//     timeouts of common load balancers, so a reused connection is
//     rarely one the other side has just dropped.
//   - Dialling (the connect timeout) is bounded, with TCP keep-alive
//     probes every 30 seconds; the TLS handshake by 10 seconds.
//   - No response-header timeout here: [Relay.Do] applies the first-byte
//     timeout itself, per call, and reply bodies carry the idle timeout.
//   - HTTP/2 is attempted with TLS upstreams (ForceAttemptHTTP2; a custom
//     dialer otherwise turns it off): providers serve it, and multiplexing
//     long-lived streams on a few connections saves handshakes and file
//     descriptors. Plain-http upstreams (a sidecar, a local model server)
//     speak HTTP/1.1, one stream per connection.
//   - Compression is off (DisableCompression): gzip would make the
//     upstream buffer its stream events and cost the relay CPU to inflate
//     them, for little gain on the short JSON of API replies; the
//     pass-through handlers forward bodies as the upstream encoded them.
//   - Proxies are taken from the environment (HTTP_PROXY, HTTPS_PROXY,
//     NO_PROXY), as net/http's default transport does.
func NewTransport() *http.Transport {
	return newTransport(DefaultConnectTimeout)
}

func newTransport(connect time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		DisableCompression:    true,
	}
}
