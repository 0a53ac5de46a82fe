package relay

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// maxReplyBytes is the largest JSON reply read from an upstream: as large
// as the largest stream event that package sse reads.
const maxReplyBytes = 32 << 20

// requestBody is a client's JSON request object, ready to be sent to each
// upstream with that upstream's model name. Members are kept as the
// client sent them (the relay must not drop or alter what it does not
// understand); only those set with [requestBody.set] are replaced.
type requestBody struct {
	members map[string]json.RawMessage
}

// parseRequestBody parses raw, the body as the client sent it; when raw is
// nil (a caller that built the Params itself) it encodes v instead.
func parseRequestBody(raw []byte, v any) (requestBody, error) {
	if raw == nil {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return requestBody{}, apierrors.Internal(fmt.Errorf("relay: encode the request: %w", err))
		}
	}
	var b requestBody
	if err := json.Unmarshal(raw, &b.members); err != nil || b.members == nil {
		// The handler decoded this very body, so it is an object.
		return requestBody{}, apierrors.Internal(fmt.Errorf("relay: the request body is not a JSON object: %v", err))
	}
	return b, nil
}

// set replaces (or adds) the member name.
func (b requestBody) set(name string, v json.RawMessage) { b.members[name] = v }

// forStream asks the upstream for a stream, with
// stream_options.include_usage true (keeping the client's other stream
// options), so that the reply's usage can be recorded whatever the client
// asked: the handler decides what the client sees.
func (b requestBody) forStream() error {
	b.set("stream", json.RawMessage("true"))
	opts := map[string]json.RawMessage{}
	if raw, ok := b.members["stream_options"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &opts); err != nil || opts == nil {
			return apierrors.InvalidRequest("stream_options", "stream_options must be an object")
		}
	}
	opts["include_usage"] = json.RawMessage("true")
	raw, err := json.Marshal(opts)
	if err != nil {
		return apierrors.Internal(fmt.Errorf("relay: encode stream_options: %w", err))
	}
	b.set("stream_options", raw)
	return nil
}

// encode returns the body for an upstream whose name for the model is
// model.
func (b requestBody) encode(model string) ([]byte, error) {
	b.members["model"] = json.RawMessage(strconv.Quote(model))
	out, err := json.Marshal(b.members)
	if err != nil {
		return nil, apierrors.Internal(fmt.Errorf("relay: encode the request: %w", err))
	}
	return out, nil
}

// readReply reads an upstream's JSON reply into v. A body that cannot be
// read or decoded is a 502; a read that timed out or that the client's
// departure broke returns that error.
func readReply(body io.Reader, u *Upstream, v any) error {
	data, err := io.ReadAll(io.LimitReader(body, maxReplyBytes+1))
	if err != nil {
		return readError(err, u)
	}
	if len(data) > maxReplyBytes {
		return apierrors.BadGateway("The upstream's reply is too large.",
			fmt.Errorf("relay: upstream %s: reply larger than %d bytes", u.Name, maxReplyBytes))
	}
	if err := json.Unmarshal(data, v); err != nil {
		return malformed(u, "reply", err, data)
	}
	return nil
}

// readError is the error for a failed read of an upstream reply: the
// client's departure and timeouts as they are (a 504 *apierrors.Error, or
// the context's error), anything else a 502.
func readError(err error, u *Upstream) error {
	if isAPIError(err) || isContextError(err) {
		return err
	}
	return apierrors.BadGateway("The upstream's reply was cut off.", fmt.Errorf("relay: upstream %s: read: %w", u.Name, err))
}

// malformed is the 502 for an upstream reply or event that is not what
// the API says.
func malformed(u *Upstream, what string, err error, data []byte) error {
	return apierrors.BadGateway("The upstream sent a "+what+" that could not be read.",
		fmt.Errorf("relay: upstream %s: malformed %s: %v: %s", u.Name, what, err, snippet(data)))
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
