package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// statusOverloaded is the status of the messages format's overloaded_error.
const statusOverloaded = 529

// maxErrorBody is how much of an upstream's error reply is read.
const maxErrorBody = 64 << 10

// UpstreamError turns an upstream's reply that is not a success into the
// client's *apierrors.Error, and closes its body after reading at most 64
// KiB of it. Every text of the reply, the client's message and the log's
// cause alike, goes through [Redact] first, with u's key:
//
//   - 401 and 403 mean that the upstream refused the gateway's own
//     credentials (its [Upstream.Key]), not the client's, whose key the
//     gateway has already accepted: they are a 502 bad_gateway whose
//     message says so, never the client's invalid_api_key. The upstream's
//     reply goes to the log only (the error's cause). The error carries
//     the header "X-Should-Retry: false", which the official SDKs obey
//     where they would retry a 5xx: only the operator can fix the key.
//     [Relay.Do] fails over on them, as on a 5xx.
//   - Any other 4xx keeps its status and the upstream's message, type,
//     code and param, read from the OpenAI error envelope
//     {"error":{"message","type","code","param"}} (or a top-level
//     "message", as vLLM and others send); a reply without one gets a
//     generic message naming the status. A code sent as a number is sent
//     as its text (codes are always strings); a missing type or code is
//     filled in from the status (400 invalid_request_error, 404
//     not_found, 429 rate_limit_exceeded, …).
//   - 429 also keeps the upstream's Retry-After (seconds or an HTTP date;
//     else retry-after-ms), which the error's renderer sends on.
//   - 529, the messages format's overloaded_error, is a 503
//     service_unavailable that keeps the upstream's Retry-After, so that
//     clients retry later. [Relay.Do] fails over on it, as on any 5xx.
//   - 5xx, and any other status (an unexpected 1xx, 2xx or 3xx), is a 502
//     bad_gateway. The upstream's text goes to the log only: it may name
//     internal hosts.
func UpstreamError(res *http.Response, u *Upstream) error {
	defer res.Body.Close()
	data, readErr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	name, key := "upstream", ""
	if u != nil {
		name, key = u.Name, u.Key
	}
	cause := fmt.Errorf("relay: upstream %s answered %s: %s", name, res.Status, snippet(data, key))
	if readErr != nil {
		cause = fmt.Errorf("%w (reading the body: %s)", cause, Redact(readErr.Error(), key))
	}
	status := res.StatusCode
	switch {
	case refused(status):
		e := apierrors.BadGateway(fmt.Sprintf("The upstream refused the gateway's credentials (HTTP %d %s); "+
			"your API key was accepted: the gateway's operator must fix the upstream key.", status, http.StatusText(status)), cause)
		// A retry cannot help: tell the official SDKs, which retry 5xx.
		e.Header = http.Header{"X-Should-Retry": {"false"}}
		return e
	case status == statusOverloaded:
		e := apierrors.New(apierrors.CodeServiceUnavailable, "The upstream is overloaded; please retry shortly.").WithCause(cause)
		e.RetryAfter = retryAfter(res.Header, time.Now())
		return e
	case status < 400 || status > 499:
		return apierrors.BadGateway(fmt.Sprintf("The upstream failed (HTTP %d).", status), cause)
	}
	env := parseEnvelope(data).redact(key)
	typ, code := defaultTypeAndCode(status)
	e := &apierrors.Error{
		Status:  status,
		Type:    typ,
		Code:    apierrors.Code(code),
		Param:   env.param,
		Message: env.message,
		Err:     cause,
	}
	if env.typ != "" {
		e.Type = env.typ
	}
	if env.code != "" {
		e.Code = apierrors.Code(env.code)
	}
	if e.Message == "" {
		e.Message = fmt.Sprintf("The upstream refused the request (HTTP %d %s).", status, http.StatusText(status))
	}
	if status == http.StatusTooManyRequests {
		e.RetryAfter = retryAfter(res.Header, time.Now())
	}
	return e
}

// defaultTypeAndCode are the type and code of an upstream 4xx that names
// none.
func defaultTypeAndCode(status int) (string, string) {
	switch status {
	case 404:
		return apierrors.TypeInvalidRequest, string(apierrors.CodeNotFound)
	case 429:
		return apierrors.TypeRateLimit, string(apierrors.CodeRateLimitExceeded)
	default:
		return apierrors.TypeInvalidRequest, string(apierrors.CodeInvalidRequest)
	}
}

type envelope struct {
	message, typ, code, param string
}

// redact returns e with each of its texts redacted.
func (e envelope) redact(key string) envelope {
	return envelope{message: Redact(e.message, key), typ: Redact(e.typ, key), code: Redact(e.code, key), param: Redact(e.param, key)}
}

// parseEnvelope reads the OpenAI error envelope, or a top-level message,
// from data. Unreadable data gives the zero envelope.
func parseEnvelope(data []byte) envelope {
	type fields struct {
		Message json.RawMessage `json:"message"`
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   json.RawMessage `json:"param"`
	}
	var v struct {
		fields
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &v) != nil {
		return envelope{}
	}
	f := v.fields
	if s, ok := jsonString(v.Error); ok {
		// {"error": "text"}
		return envelope{message: s}
	}
	var inner fields
	if json.Unmarshal(v.Error, &inner) == nil && inner.Message != nil {
		f = inner
	}
	var e envelope
	e.message, _ = jsonString(f.Message)
	e.typ, _ = jsonString(f.Type)
	e.code = jsonScalar(f.Code)
	e.param, _ = jsonString(f.Param)
	return e
}

// jsonString returns the string that raw holds, if it is one.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonScalar returns a string's value or a number's text; "" otherwise.
func jsonScalar(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// retryAfter reads the wait that an upstream 429 asks for: Retry-After in
// seconds or as an HTTP date, else retry-after-ms. Zero when none is
// given, or it is in the past.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 && s < 1e9 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(t.Sub(now), 0)
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	return 0
}

// snippet is the start of an upstream reply for the log, on one line,
// redacted ([Redact]) with the upstream's key.
func snippet(data []byte, key string) string {
	const max = 512
	cut := len(data) > max
	if cut {
		data = data[:max]
		for len(data) > 0 && !utf8.Valid(data) {
			data = data[:len(data)-1]
		}
	}
	s := string(bytes.Join(bytes.Fields(data), []byte(" ")))
	if cut {
		s += "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return Redact(s, key)
}

// redacted replaces every secret that Redact finds.
const redacted = "[redacted]"

// The credentials that Redact finds, beside the keys it is given: a
// bearer token; the value of a header, query or JSON member named like a
// key (x-api-key, x-goog-api-key, api_key, api-key, apikey, key,
// authorization, access_token, secret…), in the forms "name: value",
// "name=value" and "\"name\": \"value\""; and tokens shaped like API keys
// (sk-…, sk_…, rk-…, pk-…, and Google's AIza…), of eight characters or
// more after their prefix.
var (
	bearerRE = regexp.MustCompile(`(?i)\b(bearer\s+)(?:\[redacted\]|[^\s"'\\,;&)\]]+)`)
	namedRE  = regexp.MustCompile(`(?i)((?:\b|_)(?:x-goog-api-key|x-api-key|api[-_]?key|key|authorization|access[-_]?token|secret|password|token)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:(?:bearer|basic)\s+)?)(\[redacted\]|[^\s"'\\,;&})\]]+)`)
	tokenRE  = regexp.MustCompile(`\b(?:sk|rk|pk)[-_][A-Za-z0-9_\-*.]{7,}[A-Za-z0-9_\-*]|\bAIza[A-Za-z0-9_\-]{20,}`)
)

// Redact returns text with the credentials in it replaced by
// "[redacted]": each of keys (the upstream keys a relay is configured
// with; empty ones are skipped) wherever it occurs, then bearer tokens
// ("Bearer …"), the values of headers, query parameters and JSON members
// named like keys ("x-api-key: …", "key=…", "\"api_key\":\"…\"",
// "Authorization: …"), and tokens shaped like API keys ("sk-…", "AIza…").
// The relay sends every upstream text through it before the text reaches
// a client or a log: error messages, error events, the snippets of
// replies that it logs. Redact is safe for concurrent use.
//
// It errs on the side of hiding: a word that merely looks like a key
// goes too. Text without any of them is returned unchanged.
func Redact(text string, keys ...string) string {
	for _, k := range keys {
		if k != "" {
			text = strings.ReplaceAll(text, k, redacted)
		}
	}
	if !mayHoldSecret(text) {
		return text
	}
	text = bearerRE.ReplaceAllString(text, "${1}"+redacted)
	text = namedRE.ReplaceAllString(text, "${1}"+redacted)
	return tokenRE.ReplaceAllString(text, redacted)
}

// mayHoldSecret is a quick test that spares the regular expressions the
// texts that hold none of their anchors.
func mayHoldSecret(text string) bool {
	lower := strings.ToLower(text)
	for _, a := range [...]string{"bearer", "key", "auth", "token", "secret", "password", "sk-", "sk_", "rk-", "rk_", "pk-", "pk_", "aiza"} {
		if strings.Contains(lower, a) {
			return true
		}
	}
	return false
}
