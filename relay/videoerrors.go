package relay

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// What the video path takes out of the texts of upstream errors before
// they reach a client (a task's error, a create error), beside the
// credentials that [Redact] takes out of every text.
var (
	reVideoURL  = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://[^\s"'<>()]+`)
	reVideoIP   = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*\](?::\d+)?`)
	reVideoHost = regexp.MustCompile(`(?i)\b(?:localhost|[a-z0-9\-]+(?:\.[a-z0-9\-]+)*\.(?:internal|local|localdomain|lan|corp|intranet|svc|home\.arpa))(?::\d+)?\b`)
	reVideoCode = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,64}$`)
)

// videoScrub cleans the texts of one video task's upstream errors: the
// upstream's task id becomes the gateway's, and credentials, URLs, IP
// addresses and internal host names (the upstream's own among them) are
// taken out.
type videoScrub struct {
	host       string // the upstream's host name, from its BaseURL
	upstreamID string // the upstream's task id, once known
	taskID     string // the gateway's task id
}

func newVideoScrub(u *Upstream, upstreamID, taskID string) videoScrub {
	s := videoScrub{upstreamID: upstreamID, taskID: taskID}
	if u != nil {
		if base, err := url.Parse(u.BaseURL); err == nil {
			s.host = base.Hostname()
		}
	}
	return s
}

// text is s fit for a client.
func (s videoScrub) text(msg string) string {
	if s.upstreamID != "" {
		msg = strings.ReplaceAll(msg, s.upstreamID, s.taskID)
	}
	msg = Redact(msg)
	msg = reVideoURL.ReplaceAllString(msg, redacted)
	msg = reVideoIP.ReplaceAllString(msg, redacted)
	msg = reVideoHost.ReplaceAllString(msg, redacted)
	if s.host != "" && net.ParseIP(s.host) == nil {
		msg = replaceFold(msg, s.host, redacted)
	}
	return msg
}

// code is an upstream's error code if it looks like one (a short word),
// else "".
func (s videoScrub) code(c string) string {
	if !reVideoCode.MatchString(c) || c != s.text(c) {
		return ""
	}
	return c
}

// apiError returns err with the message and code of its *apierrors.Error
// made fit for a client, and its cause's text for the log without
// credentials. Other errors are returned as they are.
func (s videoScrub) apiError(err error) error {
	var e *apierrors.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Message = s.text(e.Message)
	if code := s.code(string(e.Code)); code != "" {
		c.Code = apierrors.Code(code)
	} else {
		c.Code = apierrors.CodeBadGateway
		if e.Status < 500 {
			c.Code = apierrors.CodeInvalidRequest
		}
	}
	c.Param = s.code(e.Param)
	if e.Err != nil {
		c.Err = redactedError{err: e.Err}
	}
	return &c
}

// replaceFold replaces every case-insensitive match of old in s.
func replaceFold(s, old, repl string) string {
	return regexp.MustCompile(`(?i)`+regexp.QuoteMeta(old)).ReplaceAllLiteralString(s, repl)
}

// redactedError is a cause whose text is logged without credentials.
type redactedError struct{ err error }

func (r redactedError) Error() string { return Redact(r.err.Error()) }
func (r redactedError) Unwrap() error { return r.err }

// videoUpstreamError is [UpstreamError] for the video path (where an
// upstream 401 or 403 is a 502 that names the gateway's credentials, as
// everywhere), its message cleaned with s.
func videoUpstreamError(res *http.Response, u *Upstream, s videoScrub) error {
	return s.apiError(UpstreamError(res, u))
}
