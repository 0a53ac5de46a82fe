package relay

import (
	"context"
	"net/http"
	"strings"
)

// The upstream's key goes where each format's clients send theirs:
// Authorization: Bearer for the OpenAI format, x-api-key for the messages
// format, x-goog-api-key for the Gemini style. Relay.Do always sets
// Authorization: Bearer; the access handler runs its calls through a copy
// of the Relay whose transport is wrapped in a credentialPlacer, which
// moves the key into the format's header, named by the request context.

type formatKey struct{}

// keyHeader is an internal request header by which a build function of
// [Relay.Do] names the header the upstream's key goes in, for an upstream
// whose API takes it elsewhere than Authorization: Bearer (X-Api-Key for
// [APIAnthropic]). The credentialPlacer of the backends' transport moves
// the key there and removes keyHeader; it never reaches the upstream.
const keyHeader = "X-Gatewaykit-Key-Header"

// withFormat returns ctx naming the format of the upstream call, for the
// credentialPlacer.
func withFormat(ctx context.Context, f format) context.Context {
	if f == formatOpenAI {
		return ctx
	}
	return context.WithValue(ctx, formatKey{}, f)
}

// credentialPlacer moves the upstream key that Relay.Do set as
// Authorization: Bearer into the header of the request's format.
type credentialPlacer struct {
	next http.RoundTripper
}

func (c credentialPlacer) RoundTrip(req *http.Request) (*http.Response, error) {
	f, _ := req.Context().Value(formatKey{}).(format)
	var header string
	switch f {
	case formatMessages:
		header = "X-Api-Key"
	case formatGemini:
		header = "X-Goog-Api-Key"
	}
	if h := req.Header.Get(keyHeader); h != "" {
		header = http.CanonicalHeaderKey(h)
	}
	if header == "" {
		return c.next.RoundTrip(req)
	}
	// A RoundTripper must not modify its request: change a copy of the
	// header map (the body is shared, as it must be).
	r2 := new(http.Request)
	*r2 = *req
	r2.Header = req.Header.Clone()
	r2.Header.Del(keyHeader)
	r2.Header.Del(header)
	if v := r2.Header.Get("Authorization"); v != "" {
		r2.Header.Del("Authorization")
		if key, ok := strings.CutPrefix(v, "Bearer "); ok && key != "" {
			r2.Header.Set(header, key)
		}
	}
	return c.next.RoundTrip(r2)
}

// withTransport returns a copy of r that sends through rt. The copy shares
// r's routes, which are never modified after New.
func (r *Relay) withTransport(rt http.RoundTripper) *Relay {
	c := *r
	c.transport = rt
	return &c
}
