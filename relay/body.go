package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/bytesem"
	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// maxReplyBytes is the largest JSON reply read from an upstream: as large
// as the largest stream event that package sse reads. The replies read at
// once are bounded too: [WithMaxReplyBytesInFlight].
const maxReplyBytes = 32 << 20

// requestBody is a client's JSON request object, ready to be sent to each
// upstream with that upstream's model name. Its members are kept as the
// client sent them, byte for byte and in order (the relay must not drop
// or alter what it does not understand); only those replaced with
// [requestBody.set] or removed with [requestBody.del] change, and the
// value of "model", which [requestBody.encode] replaces in place.
type requestBody struct {
	members *[]member
}

// member is one member of a JSON object: its name (unquoted; the key's
// own bytes when it has no escape, so that reading a body costs no copy
// of its names), its key as it was written (quoted, escapes and all) and
// its raw value.
type member struct {
	name []byte
	key  []byte
	val  []byte
}

// parseRequestBody parses raw, the body as the client sent it; when raw is
// nil (a caller that built the Params itself) it encodes v instead. raw is
// not copied: the body must not change while the requestBody is in use.
func parseRequestBody(raw []byte, v any) (requestBody, error) {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return requestBody{}, apierrors.Internal(fmt.Errorf("relay: encode the request: %w", err))
		}
	}
	members, ok := objectMembers(raw)
	if !ok {
		// The handler decoded this very body, so it is an object.
		return requestBody{}, apierrors.Internal(errors.New("relay: the request body is not a JSON object"))
	}
	return requestBody{members: &members}, nil
}

// objectMembers returns the members of the JSON object data, or false if
// data is not one.
func objectMembers(data []byte) ([]member, bool) {
	start := jsonext.SkipSpace(data, 0)
	if end := jsonext.ScanValue(data, start); end < 0 || start >= len(data) || data[start] != '{' || jsonext.SkipSpace(data, end) != len(data) {
		return nil, false
	}
	members := make([]member, 0, 8)
	err := jsonext.WalkObject(data, func(key, val []byte) error {
		m := member{key: key, val: val}
		if inner := key[1 : len(key)-1]; bytes.IndexByte(inner, '\\') < 0 {
			m.name = inner
		} else {
			var name string
			if err := json.Unmarshal(key, &name); err != nil {
				return err
			}
			m.name = []byte(name)
		}
		members = append(members, m)
		return nil
	})
	return members, err == nil
}

// get returns the value of the last member called name, as a JSON parser
// would read it.
func (b requestBody) get(name string) ([]byte, bool) {
	ms := *b.members
	for i := len(ms) - 1; i >= 0; i-- {
		if string(ms[i].name) == name {
			return ms[i].val, true
		}
	}
	return nil, false
}

// del removes every member called name.
func (b requestBody) del(name string) {
	ms := (*b.members)[:0]
	for _, m := range *b.members {
		if string(m.name) != name {
			ms = append(ms, m)
		}
	}
	*b.members = ms
}

// set replaces the members called name with one of value v, at the end.
func (b requestBody) set(name string, v []byte) {
	b.del(name)
	*b.members = append(*b.members, member{name: []byte(name), key: jsonenc.AppendString(nil, name), val: v})
}

// forStream asks the upstream for a stream, with
// stream_options.include_usage true (keeping the client's other stream
// options), so that the reply's usage can be recorded whatever the client
// asked: the handler decides what the client sees.
func (b requestBody) forStream() error {
	b.set("stream", []byte("true"))
	opts := []byte(`{"include_usage":true}`)
	if raw, ok := b.get("stream_options"); ok && string(raw) != "null" {
		inner, ok := objectMembers(raw)
		if !ok {
			return apierrors.InvalidRequest("stream_options", "stream_options must be an object")
		}
		opts = append(opts[:0], '{')
		for _, m := range inner {
			if string(m.name) != "include_usage" {
				opts = append(append(append(append(opts, m.key...), ':'), m.val...), ',')
			}
		}
		opts = append(opts, `"include_usage":true}`...)
	}
	b.set("stream_options", opts)
	return nil
}

// encode returns the body for an upstream whose name for the model is
// model: the members as they were, in order, with the value of the first
// "model" replaced (and any later one dropped).
func (b requestBody) encode(model string) ([]byte, error) {
	n := len(model) + 16
	for _, m := range *b.members {
		n += len(m.key) + len(m.val) + 2
	}
	out := append(make([]byte, 0, n), '{')
	wrote := false
	for _, m := range *b.members {
		if string(m.name) == "model" {
			if wrote {
				continue
			}
			wrote = true
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = jsonenc.AppendString(append(append(out, m.key...), ':'), model)
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, m.key...), ':'), m.val...)
	}
	if !wrote {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonenc.AppendString(append(out, `"model":`...), model)
	}
	return append(out, '}'), nil
}

// readReply reads an upstream's JSON reply whole and decodes it with
// decode (unmarshalInto for encoding/json). When rc is the body of a
// reply of [Relay.Do], its bytes count against the relay's bound on the
// replies buffered at once ([WithMaxReplyBytesInFlight]) from the first
// read until decode returns (the memory of a buffer that grows, not only
// the bytes read). A reply larger than maxReplyBytes, or than the bound
// itself, is a 502; one that does not fit beside the replies being read
// for other requests is a 503 service_unavailable with Retry-After: 1.
// Either way the rest is not read: the caller closes the body, which
// ends the upstream request. A body that cannot be read or decoded is a
// 502; a read that timed out or that the client's departure broke returns
// that error.
func readReply(rc io.Reader, u *Upstream, decode func([]byte) error) error {
	rb := replyBuffer{max: maxReplyBytes, length: -1}
	if b, ok := rc.(*body); ok {
		rb.sem, rb.length = b.replies, b.length
		if m := rb.sem.Max(); m >= 0 {
			rb.max = min(rb.max, m)
		}
	}
	defer rb.release()
	data, err := rb.readAll(rc, u)
	if err != nil {
		return err
	}
	if err := decode(data); err != nil {
		return malformed(u, "reply", err, data)
	}
	return nil
}

// replyBuffer is the buffer of one reply that [readReply] reads, its
// capacity held in sem.
type replyBuffer struct {
	sem    *bytesem.Sem // nil: no bound but max
	max    int64        // the largest reply read
	length int64        // the reply's Content-Length, or -1
	held   int64        // bytes taken from sem
}

// readAll reads rc to its end.
func (rb *replyBuffer) readAll(rc io.Reader, u *Upstream) ([]byte, error) {
	if rb.length > rb.max {
		return nil, rb.tooLarge(u)
	}
	var data []byte
	for {
		if len(data) == cap(data) {
			if n := int64(len(data)); n > 0 && (n == rb.max || n == rb.length) {
				// Full, or as long as it said: the reply should end here.
				var probe [1]byte
				k, err := io.ReadFull(rc, probe[:])
				switch {
				case k == 0 && err == io.EOF:
					return data, nil
				case k == 0:
					return nil, readError(err, u)
				case n == rb.max:
					return nil, rb.tooLarge(u)
				}
				rb.length = -1 // longer than it said: read on
				if data, err = rb.grow(data, u); err != nil {
					return nil, err
				}
				data = append(data, probe[0])
				continue
			}
			var err error
			if data, err = rb.grow(data, u); err != nil {
				return nil, err
			}
		}
		n, err := rc.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, readError(err, u)
		}
	}
}

// grow returns data in a buffer of twice its capacity (or of the reply's
// Content-Length, when known), at most max, with the difference taken
// from sem.
func (rb *replyBuffer) grow(data []byte, u *Upstream) ([]byte, error) {
	size := max(2*int64(cap(data)), 4<<10)
	if rb.length > 0 && cap(data) == 0 {
		size = rb.length
	}
	size = min(size, rb.max)
	if !rb.sem.TryAcquire(size - int64(cap(data))) {
		return nil, errRepliesBusy(u, rb.sem.Max())
	}
	rb.held += size - int64(cap(data))
	grown := make([]byte, len(data), size)
	copy(grown, data)
	return grown, nil
}

// release gives the buffer's bytes back to sem.
func (rb *replyBuffer) release() {
	rb.sem.Release(rb.held)
	rb.held = 0
}

func (rb *replyBuffer) tooLarge(u *Upstream) error {
	return apierrors.BadGateway("The upstream's reply is too large.",
		fmt.Errorf("relay: upstream %s: reply larger than %d bytes", u.Name, rb.max))
}

// repliesRetryAfter is the Retry-After of the 503 of a full bound on
// buffered replies.
const repliesRetryAfter = time.Second

// errRepliesBusy is the client's error for a reply that does not fit
// beside those being read for other requests.
func errRepliesBusy(u *Upstream, bound int64) error {
	e := apierrors.New(apierrors.CodeServiceUnavailable, "The gateway is reading too many upstream replies at once; retry in a moment.").
		WithCause(fmt.Errorf("relay: upstream %s: the replies being read hold the bound of %d bytes", u.Name, bound))
	e.RetryAfter = repliesRetryAfter
	return e
}

// unmarshalInto is the decode function of readReply for v, with
// encoding/json.
func unmarshalInto(v any) func([]byte) error {
	return func(data []byte) error { return json.Unmarshal(data, v) }
}

// readError is the error for a failed read of an upstream reply: the
// client's departure and timeouts as they are (a 504 *apierrors.Error, or
// the context's error), anything else a 502.
func readError(err error, u *Upstream) error {
	if apierrors.Has(err) || isContextError(err) {
		return err
	}
	return apierrors.BadGateway("The upstream's reply was cut off.", fmt.Errorf("relay: upstream %s: read: %w", u.Name, err))
}

// malformed is the 502 for an upstream reply or event that is not what
// the API says.
func malformed(u *Upstream, what string, err error, data []byte) error {
	return apierrors.BadGateway("The upstream sent a "+what+" that could not be read.",
		fmt.Errorf("relay: upstream %s: malformed %s: %v: %s", u.Name, what, err, snippet(data, u.Key)))
}

// estimateTokens estimates the tokens of s as OpenAI's rule of thumb
// does: about four characters a token, rounded up. It is used only when
// an upstream does not report its usage (a client that leaves mid-stream
// is still charged for what was streamed).
func estimateTokens(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// fragmentTokens estimates the tokens of a streamed fragment: upstreams
// stream about one token per fragment, so each counts at least one.
func fragmentTokens(s string) int {
	if s == "" {
		return 0
	}
	return max(estimateTokens(s), 1)
}
