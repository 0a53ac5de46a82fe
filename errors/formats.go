package errors

import "strings"

// MessagesBody is the messages-format (Anthropic) error envelope,
// {"type":"error","error":{"type","message"}}, that that format's clients
// parse. Streams of that format send it as the data of an "error" event.
type MessagesBody struct {
	Type  string        `json:"type"` // always "error"
	Error MessagesError `json:"error"`
}

// MessagesError is the "error" object of [MessagesBody].
type MessagesError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// MessagesBodyOf returns the messages-format body of e. The error type
// follows the HTTP status, as in that format's reference:
//
//	400 invalid_request_error   (and every 4xx not listed)
//	401 authentication_error
//	403 permission_error
//	404 not_found_error
//	413 request_too_large
//	429 rate_limit_error
//	529 overloaded_error
//	5xx api_error
//
// The gateway's code (invalid_api_key, model_not_found …) has no place in
// this shape; the message carries the detail.
func MessagesBodyOf(e *Error) MessagesBody {
	return MessagesBody{Type: "error", Error: MessagesError{Type: messagesType(e.Status), Message: e.Message}}
}

func messagesType(status int) string {
	switch {
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 413:
		return "request_too_large"
	case status == 429:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status >= 400 && status < 500:
		return "invalid_request_error"
	default:
		return "api_error"
	}
}

// GoogleBody is Google's error object, {"error":{"code","message","status",
// "details"}}, that Gemini-style clients parse.
type GoogleBody struct {
	Error GoogleError `json:"error"`
}

// GoogleError is the "error" object of [GoogleBody]: Code is the HTTP
// status, Status the google.rpc.Code name.
type GoogleError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []GoogleErrorInfo `json:"details,omitempty"`
}

// GoogleErrorInfo is a google.rpc.ErrorInfo detail. The gateway sends one,
// carrying its own error code in Reason (upper-cased: INVALID_API_KEY,
// MODEL_NOT_FOUND …) and the offending field, if any, in
// Metadata["param"].
type GoogleErrorInfo struct {
	Type     string            `json:"@type"` // type.googleapis.com/google.rpc.ErrorInfo
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// GoogleErrorInfoType is the @type of [GoogleErrorInfo].
const GoogleErrorInfoType = "type.googleapis.com/google.rpc.ErrorInfo"

// GoogleErrorDomain is the Domain of the gateway's [GoogleErrorInfo].
const GoogleErrorDomain = "gatewaykit"

// GoogleBodyOf returns Google's error body of e. Status is the
// google.rpc.Code that Google's HTTP mapping gives the HTTP status:
//
//	400 INVALID_ARGUMENT
//	401 UNAUTHENTICATED
//	403 PERMISSION_DENIED    (RESOURCE_EXHAUSTED for insufficient_quota)
//	404 NOT_FOUND
//	409 ABORTED
//	429 RESOURCE_EXHAUSTED
//	499 CANCELLED
//	500 INTERNAL             (and every 5xx not listed)
//	501 UNIMPLEMENTED
//	502 UNAVAILABLE          (the upstream failed; Google has no 502)
//	503 UNAVAILABLE
//	504 DEADLINE_EXCEEDED
//
// and INVALID_ARGUMENT for every other 4xx.
func GoogleBodyOf(e *Error) GoogleBody {
	status := e.Status
	if status < 400 || status > 599 {
		status = 500 // as the Renderer sends it
	}
	code := string(e.Code)
	if code == "" {
		code = string(CodeInternal)
	}
	info := GoogleErrorInfo{Type: GoogleErrorInfoType, Reason: strings.ToUpper(code), Domain: GoogleErrorDomain}
	if e.Param != "" {
		info.Metadata = map[string]string{"param": e.Param}
	}
	return GoogleBody{Error: GoogleError{
		Code:    status,
		Message: e.Message,
		Status:  googleStatus(status, e.Code),
		Details: []GoogleErrorInfo{info},
	}}
}

func googleStatus(status int, code Code) string {
	if code == CodeInsufficientQuota {
		return "RESOURCE_EXHAUSTED"
	}
	switch status {
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 502, 503:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 400 && status < 500 {
		return "INVALID_ARGUMENT"
	}
	return "INTERNAL"
}
