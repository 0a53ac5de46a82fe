package errors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Code is the machine-readable error code sent to clients in the "code"
// field. The codes of the spec are constants; backends may use others, which
// render with the status and type that [Error] carries.
type Code string

// The codes of the spec's error tables, plus not_found,
// method_not_allowed, request_timeout, service_unavailable and
// gateway_timeout.
const (
	CodeInvalidRequest       Code = "invalid_request_error"
	CodeInvalidAPIKey        Code = "invalid_api_key"
	CodeMissingAuthorization Code = "missing_authorization"
	CodeInsufficientQuota    Code = "insufficient_quota"
	CodeModelNotFound        Code = "model_not_found"
	CodeNotFound             Code = "not_found"
	CodeMethodNotAllowed     Code = "method_not_allowed"
	CodeRequestTimeout       Code = "request_timeout"
	CodeRateLimitExceeded    Code = "rate_limit_exceeded"
	CodeInternal             Code = "internal_server_error"
	CodeBadGateway           Code = "bad_gateway"
	CodeServiceUnavailable   Code = "service_unavailable"
	CodeGatewayTimeout       Code = "gateway_timeout"
)

// The error types sent in the "type" field.
const (
	TypeInvalidRequest    = "invalid_request_error"
	TypeInsufficientQuota = "insufficient_quota"
	TypeRateLimit         = "rate_limit_error"
	TypeServer            = "server_error"
	TypeUpstream          = "upstream_error"
	TypeTimeout           = "timeout_error"
)

// statusAndType maps each code of the spec to its HTTP status and error
// type. Keep it in step with the tables in the package doc and the spec.
func statusAndType(c Code) (int, string) {
	switch c {
	case CodeInvalidRequest:
		return 400, TypeInvalidRequest
	case CodeInvalidAPIKey, CodeMissingAuthorization:
		return 401, TypeInvalidRequest
	case CodeInsufficientQuota:
		return 403, TypeInsufficientQuota
	case CodeModelNotFound, CodeNotFound:
		return 404, TypeInvalidRequest
	case CodeMethodNotAllowed:
		return 405, TypeInvalidRequest
	case CodeRequestTimeout:
		return 408, TypeInvalidRequest
	case CodeRateLimitExceeded:
		return 429, TypeRateLimit
	case CodeBadGateway:
		return 502, TypeUpstream
	case CodeServiceUnavailable:
		return 503, TypeServer
	case CodeGatewayTimeout:
		return 504, TypeTimeout
	default:
		return 500, TypeServer
	}
}

// Error is a client-facing API error. Message is sent to the client
// verbatim; Err, the cause, is logged and never sent.
//
// Create one with [New] or a constructor such as [InvalidRequest]; a
// backend that needs a status outside the spec's table may fill the struct
// itself.
type Error struct {
	Status  int    // HTTP status
	Type    string // the "type" field, e.g. "invalid_request_error"
	Code    Code   // the "code" field; never empty on the wire
	Param   string // the offending field as a JSON path, if any
	Message string // sent to the client verbatim

	// RetryAfter, when positive, is sent as the Retry-After header (whole
	// seconds, rounded up).
	RetryAfter time.Duration
	// Header holds extra response headers, such as x-ratelimit-*.
	Header http.Header

	Err error // the cause: logged, never sent
}

// New returns an error with the status and type that code maps to.
func New(code Code, message string) *Error {
	status, typ := statusAndType(code)
	return &Error{Status: status, Type: typ, Code: code, Message: message}
}

// Error implements the error interface. It includes the cause, so it is for
// logs, not for clients.
func (e *Error) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
	if e.Param != "" {
		s += " (param " + e.Param + ")"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// WithParam returns a copy of e naming the offending field.
func (e *Error) WithParam(param string) *Error {
	c := *e
	c.Param = param
	return &c
}

// WithCause returns a copy of e carrying cause for the log.
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.Err = cause
	return &c
}

// InvalidRequest is a 400 invalid_request_error. param names the offending
// field as a JSON path ("messages[0].role"), or is empty.
func InvalidRequest(param, message string) *Error {
	return New(CodeInvalidRequest, message).WithParam(param)
}

// InvalidRequestf is [InvalidRequest] with a format string.
func InvalidRequestf(param, format string, args ...any) *Error {
	return InvalidRequest(param, fmt.Sprintf(format, args...))
}

// InvalidAPIKey is a 401 invalid_api_key: the key is unknown, malformed,
// expired or disabled.
func InvalidAPIKey(message string) *Error {
	return New(CodeInvalidAPIKey, message)
}

// MissingAuthorization is a 401 missing_authorization.
func MissingAuthorization(message string) *Error {
	return New(CodeMissingAuthorization, message)
}

// InsufficientQuota is a 403 insufficient_quota.
func InsufficientQuota(message string) *Error {
	return New(CodeInsufficientQuota, message)
}

// ModelNotFound is a 404 model_not_found for the named model, with param
// "model".
func ModelNotFound(model string) *Error {
	return New(CodeModelNotFound, "The model "+Quote(model)+" does not exist or you do not have access to it.").WithParam("model")
}

// NotFound is a 404 not_found, for a resource (a task, a stored response)
// that does not exist or belongs to another key.
func NotFound(message string) *Error {
	return New(CodeNotFound, message)
}

// MethodNotAllowed is a 405 method_not_allowed for a path that exists
// with other methods, which it lists in the Allow header and the message
// ("The method PUT is not allowed on /v1/models; use GET or HEAD."). With
// no method allowed, the message ends after the path and the Allow header
// is empty, which says that the resource allows none (RFC 9110, section
// 10.2.1).
func MethodNotAllowed(method, path string, allow []string) *Error {
	msg := fmt.Sprintf("The method %s is not allowed on %s", Echo(method), Echo(path))
	if len(allow) > 0 {
		msg += "; use " + strings.Join(allow, " or ")
	}
	e := New(CodeMethodNotAllowed, msg+".")
	e.Header = http.Header{"Allow": {strings.Join(allow, ", ")}}
	return e
}

// RateLimitExceeded is a 429 rate_limit_exceeded that tells the client to
// retry after retryAfter.
func RateLimitExceeded(message string, retryAfter time.Duration) *Error {
	e := New(CodeRateLimitExceeded, message)
	e.RetryAfter = retryAfter
	return e
}

// Internal is a 500 internal_server_error. The client sees only
// "internal server error"; cause goes to the log.
func Internal(cause error) *Error {
	return New(CodeInternal, internalMessage).WithCause(cause)
}

// BadGateway is a 502 bad_gateway: the upstream failed or answered
// something unusable. message is sent to the client; cause is logged.
func BadGateway(message string, cause error) *Error {
	return New(CodeBadGateway, message).WithCause(cause)
}

// UnavailableRetryAfter is the Retry-After of [Unavailable]: long enough
// for a database to fail over or a connection pool to reconnect, short
// enough for the official SDKs' two retries to be worth waiting for.
const UnavailableRetryAfter = 2 * time.Second

// msgUnavailable is the message of [Unavailable].
const msgUnavailable = "The gateway cannot reach a service it depends on (its database or rate limiter) right now. Please retry shortly."

// Unavailable is a 503 service_unavailable, sent with Retry-After
// ([UnavailableRetryAfter]), for a request that a dependency of the
// gateway could not serve: a store or a rate limiter that cannot be
// reached. Clients, SDKs and load balancers retry it, where they would
// take a 500 for a bug. The client sees a fixed message, never the
// cause, which goes to the log.
func Unavailable(cause error) *Error {
	e := New(CodeServiceUnavailable, msgUnavailable).WithCause(cause)
	e.RetryAfter = UnavailableRetryAfter
	return e
}

// FromDependency returns the error to send for err, the failure of a
// dependency (a store, a rate limiter) that the request of ctx needed,
// once the caller has handled the sentinels of the dependency's contract
// (not found, quota exceeded…). It is:
//
//   - err itself if it is, or wraps, an [*Error]: the dependency said
//     what the client is to be told;
//   - err itself if it is the request's own end, ctx being done
//     (context.Canceled: the client went away, and nothing is written;
//     context.DeadlineExceeded: 504 gateway_timeout);
//   - otherwise [Unavailable] with err as its cause, a dependency's own
//     timeout included.
//
// FromDependency(ctx, nil) is nil.
func FromDependency(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case Has(err):
		return err
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		return err
	}
	return Unavailable(err)
}

const internalMessage = "internal server error"

// From returns the [*Error] in err's chain. An error with none becomes a
// 500 internal_server_error carrying err as its cause, and
// context.DeadlineExceeded a 504 gateway_timeout. From(nil) is nil.
//
// Callers that must tell a departed client apart check
// errors.Is(err, context.Canceled) first: From maps it to a 500 like any
// other unknown error.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return New(CodeGatewayTimeout, "the request timed out").WithCause(err)
	}
	return Internal(err)
}

// Has reports whether err is, or wraps, an *Error: whether it says what a
// client is to be told. The packages of this module that pass errors on
// (a store's, a backend's, a decoder's) ask it before wrapping an error
// as a 500.
func Has(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// retryAfterSeconds formats d as the whole number of seconds of a
// Retry-After header, never less than 1.
func retryAfterSeconds(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
