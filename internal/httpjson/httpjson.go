// Package httpjson decodes JSON request bodies for the endpoint handlers,
// turning every way a body can be wrong into a clear 400
// invalid_request_error, and writes JSON replies.
package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// DefaultMaxBytes is the request-body limit of the video and relayed
// (multipart) endpoints unless configured otherwise: 32 MiB, room for a
// few images sent as data URIs.
const DefaultMaxBytes int64 = 32 << 20

// DefaultTextMaxBytes is the request-body limit of the text endpoints
// (chat completions, completions, responses) unless configured
// otherwise: 8 MiB, room for a long conversation and an image or two sent
// as data URIs.
const DefaultTextMaxBytes int64 = 8 << 20

// CheckContentType returns a 400 unless r's Content-Type is JSON or absent.
func CheckContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" || ct == "application/json" { // the usual value, without parsing it
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return apierrors.InvalidRequestf("", "Content-Type must be application/json, got %s", apierrors.Quote(ct))
	}
	return nil
}

// Decode reads r's body, at most maxBytes of it, as exactly one JSON value
// into dst. Errors are *apierrors.Error values (400 invalid_request_error)
// that say what is wrong; an *apierrors.Error returned by a custom
// UnmarshalJSON passes through as it is.
func Decode(w http.ResponseWriter, r *http.Request, maxBytes int64, dst any) error {
	body, err := ReadJSON(w, r, maxBytes)
	if err != nil {
		return err
	}
	return Unmarshal(body, dst)
}

// ReadJSON reads r's body, at most maxBytes of it, once CheckContentType
// accepts r.
func ReadJSON(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, error) {
	if err := CheckContentType(r); err != nil {
		return nil, err
	}
	return ReadBody(w, r, maxBytes)
}

// ReadBody reads r's body, at most maxBytes of it.
func ReadBody(w http.ResponseWriter, r *http.Request, maxBytes int64) ([]byte, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if r.ContentLength > maxBytes {
		return nil, TooLarge(maxBytes)
	}
	if r.ContentLength > 0 {
		// The server's body reader ends after ContentLength bytes, so the
		// body is read in one exact allocation, with no limit reader.
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, readError(err)
		}
		return body, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) && !apierrors.Has(err) {
			return nil, TooLarge(maxBytes)
		}
		return nil, readError(err)
	}
	return body, nil
}

// readError turns an error reading a body into a 400, unless it is, or
// wraps, an *apierrors.Error: a body reader set by a middleware (the
// body read deadline, the bound on bytes in flight) says what to answer.
func readError(err error) error {
	var api *apierrors.Error
	if errors.As(err, &api) {
		return api
	}
	return apierrors.InvalidRequest("", "could not read the request body").WithCause(err)
}

// TooLarge is the error for a body over limit bytes.
func TooLarge(limit int64) *apierrors.Error {
	return apierrors.InvalidRequestf("", "request body is larger than the %s limit", FormatBytes(limit))
}

// Unmarshal decodes data, exactly one JSON object, into dst, with the
// error messages of [Decode]. A body that decodes but is not an object
// (null included), or that names a member twice, is refused as
// [CheckObject] says.
func Unmarshal(data []byte, dst any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return apierrors.InvalidRequest("", "request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierrors.InvalidRequest("", "request body must hold a single JSON value")
	}
	return CheckObject(data, reflect.TypeOf(dst))
}

// CheckObject returns a 400 invalid_request_error for data, a body that
// decoded into a value of type t, unless it is a JSON object whose
// objects each name every member once:
//
//	null, or another kind        "request body must be a JSON object, got null"
//	a member given twice         "messages[0].role must appear once in the request body", param the same path
//
// Every object is checked, at every depth, the members that the kit
// keeps as sent included; names are compared as encoding/json matches
// them to t's fields, case-insensitively (see jsonext.DuplicateMember).
// encoding/json would keep the last of two members, and an upstream may
// read the first: the body is ambiguous, and a gateway must not check one
// value and forward another.
func CheckObject(data []byte, t reflect.Type) error {
	i := jsonext.SkipSpace(data, 0)
	if i < len(data) && data[i] != '{' {
		return apierrors.InvalidRequestf("", "request body must be a JSON object, got %s", jsonext.Kind(data[i]))
	}
	if path := jsonext.DuplicateMember(data, t); path != "" {
		return Duplicate(path)
	}
	return nil
}

// Duplicate is the error of a member that the body gives twice, at path.
func Duplicate(path string) *apierrors.Error {
	return apierrors.InvalidRequest(path, path+" must appear once in the request body")
}

func decodeError(err error) error {
	var (
		api    *apierrors.Error
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &api):
		return api
	case errors.As(err, &syntax):
		return apierrors.InvalidRequestf("", "request body is not valid JSON: %s (at byte %d)", syntax.Error(), syntax.Offset).WithCause(err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apierrors.InvalidRequest("", "request body is not valid JSON: unexpected end of input").WithCause(err)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return apierrors.InvalidRequestf("", "request body must be a JSON %s, got %s", jsonKind(typ.Type.Kind().String()), apierrors.Echo(typ.Value)).WithCause(err)
		}
		return apierrors.InvalidRequestf(typ.Field, "%s must be %s, got %s", apierrors.Echo(typ.Field), article(jsonKind(typ.Type.Kind().String())), apierrors.Echo(typ.Value)).WithCause(err)
	default:
		return apierrors.InvalidRequest("", "request body could not be decoded: "+err.Error()).WithCause(err)
	}
}

// jsonKind names a Go kind the way a JSON client thinks of it.
func jsonKind(kind string) string {
	switch kind {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	default:
		return "value of another type"
	}
}

func article(s string) string {
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + s
	}
	return "a " + s
}

// FormatBytes renders n as a short human size: "32 MiB", "512 KiB", "100 bytes".
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

var jsonType = []string{"application/json"}

// Write sends v as a JSON reply with the given status.
func Write(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	WriteRaw(w, status, b)
	return nil
}

// WriteRaw sends pre-encoded JSON with the given status and a
// Content-Length.
func WriteRaw(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
