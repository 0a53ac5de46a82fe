package relay

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Upstream is one service that a model is relayed to: OpenAI-compatible,
// or speaking another format ([Upstream.API]).
type Upstream struct {
	// Name names the upstream in logs; the default is BaseURL's host.
	Name string
	// BaseURL is the API's base, ending in /v1, such as
	// "http://127.0.0.1:9000/v1". Request paths are appended to it
	// ("/chat/completions"); a trailing slash is removed. For API
	// [APIGemini] it may end in /v1beta instead (Google's
	// "https://generativelanguage.googleapis.com/v1beta").
	BaseURL string
	// Key is the upstream's own API key, sent as "Authorization: Bearer
	// <Key>" on every request to it (in the header of the format instead
	// where the relay speaks another: x-api-key to an [APIAnthropic]
	// upstream, x-goog-api-key to an [APIGemini] one, and on the access
	// points of each format). The client's key is never sent upstream.
	// Empty sends no Authorization header.
	Key string
	// Model is the upstream's name for the model. [New] sets it to the
	// route's public name when it is empty, so the Upstream values that
	// [Relay.Do] hands out always carry the name to send.
	Model string
	// API is the wire format the upstream speaks; empty means [APIOpenAI].
	// It decides which access points the relay passes through to the
	// upstream unchanged (see [NewAccessHandler] and [WithFallback]),
	// and how the chat and responses backends talk to it: an
	// [APIAnthropic] or [APIGemini] upstream is sent their requests
	// translated into its own format (see the package documentation,
	// Upstreams of other formats).
	API API
}

// API names the wire format of an upstream.
type API string

// The APIs an [Upstream] can speak.
const (
	// APIOpenAI is the OpenAI-compatible API: chat completions,
	// completions, responses, videos and the OpenAI-format access points
	// (embeddings, images, audio, moderations, rerank).
	APIOpenAI API = "openai"
	// APIAnthropic is the messages format (POST /v1/messages).
	APIAnthropic API = "anthropic"
	// APIGemini is the Gemini-style generateContent and
	// streamGenerateContent.
	APIGemini API = "gemini"
)

// URL returns the upstream's URL for path, which starts with a slash:
// u.URL("/chat/completions").
func (u *Upstream) URL(path string) string {
	return u.BaseURL + path
}

// Route names the upstreams of one public model, in failover order: each
// request goes to the first, and to the next only when one fails in a way
// that [Relay.Do] may retry.
type Route struct {
	// Model is the public model id that clients send.
	Model string
	// Upstreams serve the model, in failover order; at least one.
	Upstreams []Upstream
}

// Timeouts bound each upstream call. A zero field takes its default.
//
// Connect bounds dialling (TCP and TLS) a new connection. It is applied
// by the relay's own transport; a transport given with [WithTransport]
// keeps its own dial timeouts.
//
// FirstByte bounds the wait for the reply's headers after the request is
// sent. A non-streaming upstream sends its headers only when the whole
// reply is ready, so FirstByte must cover the longest generation; a
// streaming one sends them at once. The default is generous for that
// reason.
//
// Idle bounds each wait for the next bytes of a reply body: between the
// events of a stream, and between the reads of a JSON reply. While the
// upstream is silent, the handlers' SSE keep-alive comments bridge the
// wait for the client.
type Timeouts struct {
	Connect   time.Duration
	FirstByte time.Duration
	Idle      time.Duration
}

// The default timeouts.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 10 * time.Minute
	DefaultIdleTimeout      = 5 * time.Minute
)

func (t Timeouts) withDefaults() Timeouts {
	if t.Connect <= 0 {
		t.Connect = DefaultConnectTimeout
	}
	if t.FirstByte <= 0 {
		t.FirstByte = DefaultFirstByteTimeout
	}
	if t.Idle <= 0 {
		t.Idle = DefaultIdleTimeout
	}
	return t
}

// normalize checks u and fills its defaults: Name from the host, Model
// from the public name, no trailing slash on BaseURL.
func (u *Upstream) normalize(public string) error {
	base, err := url.Parse(u.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return fmt.Errorf("relay: upstream %q of model %q: BaseURL must be an absolute http(s) URL", u.BaseURL, public)
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return fmt.Errorf("relay: upstream %q of model %q: BaseURL must have no query or fragment", u.BaseURL, public)
	}
	switch u.API {
	case "":
		u.API = APIOpenAI
	case APIOpenAI, APIAnthropic, APIGemini:
	default:
		return fmt.Errorf("relay: upstream %q of model %q: unknown API %q (want %q, %q or %q)", u.BaseURL, public, u.API, APIOpenAI, APIAnthropic, APIGemini)
	}
	u.BaseURL = strings.TrimRight(u.BaseURL, "/")
	if u.Name == "" {
		u.Name = base.Host
	}
	if u.Model == "" {
		u.Model = public
	}
	return nil
}
