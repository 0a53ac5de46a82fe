package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// modelLoc is where a JSON request body names its model.
type modelLoc struct {
	model      string
	start, end int // byte range of the model's JSON string; end == 0: no model member
}

// findModel reads the top-level "model" member of a JSON object body,
// without decoding the rest into values: a gateway forwards every member,
// modelled or not, as the client sent it. Errors are 400
// invalid_request_error values for a body that is not one JSON object,
// a model that is not a string, and a model named twice.
//
// Members whose name equals "model" ignoring case count as the model too:
// encoding/json, and so many upstreams, match member names that way, so a
// second "MODEL" could otherwise choose another model than the one
// checked. Such a body is refused.
func findModel(body []byte) (modelLoc, error) {
	var loc modelLoc
	if len(bytes.TrimSpace(body)) == 0 {
		return loc, apierrors.InvalidRequest("", "request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return loc, syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return loc, apierrors.InvalidRequest("", "request body must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return loc, syntaxError(err)
		}
		key, _ := tok.(string) // a member name: the decoder guarantees a string here
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return loc, syntaxError(err)
		}
		if !strings.EqualFold(key, "model") {
			continue
		}
		if loc.end != 0 {
			return loc, apierrors.InvalidRequest("model", "model must appear once in the request body")
		}
		if err := json.Unmarshal(raw, &loc.model); err != nil {
			return loc, apierrors.InvalidRequestf("model", "model must be a string, got %s", truncate(raw, 40))
		}
		loc.end = int(dec.InputOffset())
		loc.start = loc.end - len(raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return loc, syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return loc, apierrors.InvalidRequest("", "request body must hold a single JSON value")
	}
	return loc, nil
}

// rename returns body with its model replaced by name, or body itself when
// the name does not change (or the body names no model).
func (l modelLoc) rename(body []byte, name string) []byte {
	if l.end == 0 || name == l.model {
		return body
	}
	quoted, _ := json.Marshal(name) // a string always encodes
	out := make([]byte, 0, len(body)-(l.end-l.start)+len(quoted))
	out = append(out, body[:l.start]...)
	out = append(out, quoted...)
	return append(out, body[l.end:]...)
}

func syntaxError(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return apierrors.InvalidRequestf("", "request body is not valid JSON: %s (at byte %d)", syn.Error(), syn.Offset).WithCause(err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return apierrors.InvalidRequest("", "request body is not valid JSON: unexpected end of input").WithCause(err)
	default:
		return apierrors.InvalidRequest("", "request body is not valid JSON: "+err.Error()).WithCause(err)
	}
}

// truncate returns b for a message, cut to at most n bytes.
func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
