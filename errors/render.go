package errors

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
)

// Shape selects a wire shape: one of the three of the spec, or the error
// shape of one of the other two compatible formats of spec §4.4.
type Shape uint8

const (
	// General is {"error":{"message","type","param","code"}}.
	General Shape = iota
	// Flat is the video task-creation shape: {"code","message"} plus an
	// "error" object with the same message and code. Client errors other
	// than 429 and 403 insufficient_quota are sent with status 400, as the
	// spec's create paths answer every failure.
	Flat
	// Content is the content-download shape: {"error":{"message","type"}}.
	Content
	// Messages is the messages-format (Anthropic) envelope:
	// {"type":"error","error":{"type","message"}}; see [MessagesBodyOf].
	Messages
	// Google is Google's error object:
	// {"error":{"code","message","status","details"}}; see [GoogleBodyOf].
	Google
)

// ShapeFor returns the error shape of the family of r's path, the one
// in which its clients read errors: [Messages] for the messages format
// (/v1/messages), [Google] for the Gemini-style family (every path under
// /v1beta/), and [General] for everything else. The auth middleware
// takes it (auth.WithErrorShape), so that its 401, 403 and 429 come in
// the same shape as the handlers' own errors.
func ShapeFor(r *http.Request) Shape {
	p := r.URL.Path
	switch {
	case strings.Contains(p, "/v1beta/"):
		return Google
	case strings.HasSuffix(p, "/v1/messages"):
		return Messages
	}
	return General
}

// WireError is the "error" object of the general shape. Param is a pointer
// so that it renders as null when no field is at fault.
type WireError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    string  `json:"code"`
}

// Body is the general error body. Streams send it as the data of their
// error event.
type Body struct {
	Error WireError `json:"error"`
}

// flatBody is the task-creation shape.
type flatBody struct {
	Code    string    `json:"code"`
	Message string    `json:"message"`
	Error   WireError `json:"error"`
}

// contentError and contentBody are the content-download shape. The spec
// shows message and type; code is added, as on every other error, so
// that clients can tell a missing task from a task not yet completed.
type contentError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

type contentBody struct {
	Error contentError `json:"error"`
}

// BodyOf returns the general wire body of e.
func BodyOf(e *Error) Body {
	return Body{Error: wireError(e, string(e.Code))}
}

func wireError(e *Error, code string) WireError {
	w := WireError{Message: e.Message, Type: e.Type, Code: code}
	if e.Param != "" {
		p := e.Param
		w.Param = &p
	}
	if w.Type == "" {
		w.Type = TypeServer
	}
	if w.Code == "" {
		w.Code = string(CodeInternal)
	}
	return w
}

// flatCode spells code as the task-creation shape does.
func flatCode(c Code) string {
	if c == CodeInvalidRequest {
		return "invalid_request"
	}
	return string(c)
}

// Renderer writes errors in one wire shape and logs them. The zero value
// writes the general shape and logs nothing. A Renderer is safe for
// concurrent use.
type Renderer struct {
	Shape  Shape
	Logger *slog.Logger // nil discards
}

// Write is the zero [Renderer]'s Write: the general shape, nothing logged.
func Write(w http.ResponseWriter, r *http.Request, err error) {
	Renderer{}.Write(w, r, err)
}

// Write sends err to the client in rd's shape, with its status and headers
// (Retry-After, and any in [Error.Header]), and logs it: client errors at
// debug level, server errors with their cause at error level. A nil err
// writes nothing. context.Canceled writes nothing either: the client has
// gone.
func (rd Renderer) Write(w http.ResponseWriter, r *http.Request, err error) {
	if err == nil {
		return
	}
	ctx := r.Context()
	if errors.Is(err, context.Canceled) && !Has(err) {
		rd.log(ctx, slog.LevelDebug, "client went away", r, err)
		return
	}
	e := From(err)
	level := slog.LevelDebug
	if e.Status >= 500 {
		level = slog.LevelError
	}
	rd.log(ctx, level, "request failed", r, e)

	h := w.Header()
	for k, vs := range e.Header {
		h[k] = append([]string(nil), vs...)
	}
	if e.RetryAfter > 0 {
		h.Set("Retry-After", retryAfterSeconds(e.RetryAfter))
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	status := e.Status
	switch {
	case status < 400 || status > 599:
		status = 500
	case rd.Shape == Flat && status < 500 && status != 429 && e.Code != CodeInsufficientQuota:
		// The spec answers every task-creation failure with a 400, but
		// for the rate limit and the quota, which keep the status that
		// the auth middleware sends for them (429, 403).
		status = 400
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(rd.body(e))
}

func (rd Renderer) body(e *Error) any {
	switch rd.Shape {
	case Flat:
		code := flatCode(e.Code)
		if code == "" {
			code = string(CodeInternal)
		}
		return flatBody{Code: code, Message: e.Message, Error: wireError(e, code)}
	case Messages:
		return MessagesBodyOf(e)
	case Google:
		return GoogleBodyOf(e)
	case Content:
		typ := e.Type
		if typ == "" {
			typ = TypeServer
		}
		code := string(e.Code)
		if code == "" {
			code = string(CodeInternal)
		}
		return contentBody{Error: contentError{Message: e.Message, Type: typ, Code: code}}
	default:
		return BodyOf(e)
	}
}

func (rd Renderer) log(ctx context.Context, level slog.Level, msg string, r *http.Request, err error) {
	if rd.Logger == nil || !rd.Logger.Enabled(ctx, level) {
		return
	}
	rd.Logger.LogAttrs(ctx, level, msg,
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("error", err.Error()),
	)
}
