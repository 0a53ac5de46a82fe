package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// modelLoc is where a JSON request body names its model.
type modelLoc struct {
	model      string
	start, end int // byte range of the model's JSON string; end == 0: no model member
}

// findModel reads the top-level "model" member of a JSON object body,
// without decoding the rest: a gateway forwards every member, modelled or
// not, as the client sent it. Errors are 400 invalid_request_error values
// for a body that is not one JSON object, a model that is not a string,
// and a model named twice.
//
// Members whose name equals "model" ignoring case count as the model too:
// encoding/json, and so many upstreams, match member names that way, so a
// second "MODEL" could otherwise choose another model than the one
// checked. Such a body is refused.
//
// The body is validated in one pass (json.Valid) and then walked member
// by member with package jsonext's scanner, skipping values without
// decoding them (on a valid body it never fails, so the walk needs no
// error checks); only the model's string is decoded.
func findModel(body []byte) (modelLoc, error) {
	var loc modelLoc
	i := jsonext.SkipSpace(body, 0)
	if i == len(body) {
		return loc, apierrors.InvalidRequest("", "request body is empty; expected a JSON object")
	}
	if !json.Valid(body) {
		return loc, syntaxError(json.Unmarshal(body, new(json.RawMessage)))
	}
	if body[i] != '{' {
		return loc, apierrors.InvalidRequest("", "request body must be a JSON object")
	}
	i++
	for {
		i = jsonext.SkipSpace(body, i)
		if body[i] == '}' {
			return loc, nil
		}
		keyStart := i
		i = jsonext.SkipString(body, i)
		key := body[keyStart:i]
		i = jsonext.SkipSpace(body, i) + 1 // the colon
		i = jsonext.SkipSpace(body, i)
		valStart := i
		i = jsonext.SkipValue(body, i)
		if isModelKey(key) {
			if loc.end != 0 {
				return loc, apierrors.InvalidRequest("model", "model must appear once in the request body")
			}
			raw := body[valStart:i]
			if raw[0] != '"' {
				return loc, apierrors.InvalidRequestf("model", "model must be a string, got %s", apierrors.Echo(string(raw)))
			}
			if err := json.Unmarshal(raw, &loc.model); err != nil {
				return loc, syntaxError(err) // unreachable: the body is valid
			}
			loc.start, loc.end = valStart, i
		}
		i = jsonext.SkipSpace(body, i)
		if body[i] == '}' {
			return loc, nil
		}
		i++ // the comma
	}
}

// isModelKey reports whether the quoted member name key is "model",
// ignoring case.
func isModelKey(key []byte) bool {
	name := key[1 : len(key)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		var s string
		return json.Unmarshal(key, &s) == nil && strings.EqualFold(s, "model")
	}
	return len(name) == 5 && strings.EqualFold(string(name), "model")
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
