package sse

import (
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// DefaultKeepAlive is the interval of silence after which a [Stream] writes
// a ": keep-alive" comment line, unless [WithKeepAlive] sets another one.
// It is well below the 60-second idle timeouts that common proxies and load
// balancers apply.
const DefaultKeepAlive = 15 * time.Second

// An Option configures a [Stream] opened by [Start].
type Option func(*config)

type config struct {
	keepAlive time.Duration
	renderer  apierrors.Renderer
}

func newConfig(opts []Option) config {
	c := config{keepAlive: DefaultKeepAlive}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithKeepAlive sets the interval of silence after which the stream writes
// a ": keep-alive" comment line, so that proxies do not cut an idle
// connection while a backend is slow to produce its first token or is
// reasoning. Clients ignore comment lines. The timer runs from [Start]
// and restarts with every write, so a stream that sends events more often
// than d never carries a comment. The first comment sends the response
// headers, like the first event: a stream that has been silent for d is
// [Stream.Started].
//
// The default is [DefaultKeepAlive] (15s); 0 disables keep-alive comments,
// and with them the stream's timer. WithKeepAlive panics if d is
// negative.
func WithKeepAlive(d time.Duration) Option {
	if d < 0 {
		panic("sse: WithKeepAlive: negative interval")
	}
	return func(c *config) { c.keepAlive = d }
}

// WithRenderer sets the renderer that [Stream.Error] uses for an error that
// happens before the stream started: it answers with a JSON error and a
// real HTTP status, in rd's shape. The renderer's logger also logs the
// errors that [Stream.Error] sends as error events.
//
// The default is the zero [apierrors.Renderer]: the general shape, nothing
// logged.
func WithRenderer(rd apierrors.Renderer) Option {
	return func(c *config) { c.renderer = rd }
}
