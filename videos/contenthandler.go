package videos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/mediareply"
)

// contentCacheControl is the Cache-Control of content replies: a browser
// may keep the bytes, but must ask the gateway before each reuse, with
// the credentials of that request (a 304 when they may still read them),
// so that a key forgotten, or another account's, never reads them from
// its cache. Shared caches keep nothing.
const contentCacheControl = "private, no-cache"

// serveContent serves GET and HEAD /v1/videos/{task_id}/content, every
// row of the table of spec §4.7.
func (h *handler) serveContent(w http.ResponseWriter, r *http.Request, owner, id string) {
	variant, err := variantOf(r.URL.Query())
	if err != nil {
		h.content.Write(w, r, err)
		return
	}
	t, err := h.getTask(r.Context(), owner, id)
	if err != nil {
		h.content.Write(w, r, err)
		return
	}
	if t.Status != StatusCompleted {
		h.content.Write(w, r, apierrors.InvalidRequestf("", "Video task %s has status %s; its content can be downloaded once it is completed.", t.ID, t.Status))
		return
	}
	if variant == VariantThumbnail && !t.HasThumbnail {
		h.content.Write(w, r, apierrors.NotFound(fmt.Sprintf("Video task %s has no thumbnail.", t.ID)))
		return
	}

	// A result the generator left at a URL.
	external := t.Metadata.URL
	if variant == VariantThumbnail {
		external = t.Metadata.ThumbnailURL
	}
	if external != "" {
		h.redirectOrProxy(w, r, t.ID, variant, external, "")
		return
	}

	c, err := h.contents.Open(r.Context(), t.ID, variant)
	if errors.Is(err, ErrNoContent) {
		h.content.Write(w, r, apierrors.NotFound(fmt.Sprintf("The %s of video task %s is no longer available.", variant, t.ID)).WithCause(err))
		return
	}
	if err != nil {
		h.content.Write(w, r, storeError(r.Context(), err))
		return
	}
	if c.Body == nil {
		h.redirectOrProxy(w, r, t.ID, variant, c.URL, c.ContentType)
		return
	}
	defer c.Body.Close()
	hd := w.Header()
	setMediaHeaders(hd, t.ID, variant, c.ContentType)
	hd.Set("ETag", `"`+t.ID+"-"+string(variant)+`"`) // content never changes
	http.ServeContent(&contentWriter{ResponseWriter: w, h: h, r: r, id: t.ID, v: variant}, r, "", c.ModTime, c.Body)
}

// variantOf reads the query parameter variant: absent or empty means the
// video; a value other than video or thumbnail, or more than one value,
// is a 400 that names them.
func variantOf(q url.Values) (Variant, error) {
	vs := q["variant"]
	if len(vs) > 1 {
		names := make([]string, 0, 3)
		for _, v := range vs[:min(len(vs), 3)] {
			names = append(names, apierrors.Quote(v))
		}
		if len(vs) > 3 {
			names = append(names, "…")
		}
		return "", apierrors.InvalidRequestf("variant", "variant must be given once, got %d values: %s", len(vs), strings.Join(names, ", "))
	}
	if len(vs) == 0 || vs[0] == "" {
		return VariantVideo, nil
	}
	if v := Variant(vs[0]); v.Valid() {
		return v, nil
	}
	return "", apierrors.InvalidRequestf("variant", `variant must be "video" or "thumbnail", got %s`, apierrors.Quote(vs[0]))
}

// setMediaHeaders sets the headers of the bytes of variant v of task id,
// stored as contentType: a media type a video or thumbnail may have (else
// application/octet-stream), a file name to save them as, nosniff, a
// sandbox policy, and [contentCacheControl].
func setMediaHeaders(hd http.Header, id string, v Variant, contentType string) {
	hd.Set("Content-Disposition", contentDisposition(id, v, contentType))
	mediareply.Video.Set(hd, contentType)
	hd.Set("Cache-Control", contentCacheControl)
}

// contentWriter is the ResponseWriter given to http.ServeContent: its
// error replies (416 for a range outside the content, 412 for a failed
// If-Match or If-Unmodified-Since, 500 for content that cannot be read)
// are answered in the content-download shape instead of its plain text
// or empty body; every other reply passes.
type contentWriter struct {
	http.ResponseWriter
	h      *handler
	r      *http.Request
	id     string
	v      Variant
	failed bool
}

func (w *contentWriter) WriteHeader(status int) {
	if status < 400 || w.failed {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.failed = true
	w.h.writeContentError(w.ResponseWriter, w.r, w.id, w.v, status, rangeSize(w.Header()))
}

// rangeSize reads the size of the content from the Content-Range of a 416,
// "bytes */SIZE"; -1 if it has none.
func rangeSize(h http.Header) int64 {
	if rest, ok := strings.CutPrefix(h.Get("Content-Range"), "bytes */"); ok {
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

func (w *contentWriter) Write(p []byte) (int, error) {
	if w.failed {
		return len(p), nil // ServeContent's text, replaced
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom keeps the underlying writer's ReadFrom (sendfile for a file).
func (w *contentWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.failed {
		return io.Copy(io.Discard, src)
	}
	return io.Copy(w.ResponseWriter, src)
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *contentWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// writeContentError answers a content request that failed with status, as
// http.ServeContent or an origin answered it, in the content-download
// shape: a 416 keeps Content-Range (bytes */size, when size is known),
// nothing of the content's own headers stays.
func (h *handler) writeContentError(w http.ResponseWriter, r *http.Request, id string, v Variant, status int, size int64) {
	hd := w.Header()
	for _, k := range []string{"Content-Disposition", "Content-Range", "ETag", "Last-Modified", "Cache-Control", "Accept-Ranges"} {
		hd.Del(k)
	}
	var err error
	switch status {
	case http.StatusRequestedRangeNotSatisfiable:
		msg := fmt.Sprintf("Range %s is not satisfiable for the %s of video task %s.", apierrors.Quote(r.Header.Get("Range")), v, id)
		if size >= 0 {
			hd.Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			msg = fmt.Sprintf("Range %s is not satisfiable: the %s of video task %s is %d bytes long.", apierrors.Quote(r.Header.Get("Range")), v, id, size)
		}
		err = &apierrors.Error{Status: status, Type: apierrors.TypeInvalidRequest, Code: codeRangeNotSatisfiable, Message: msg}
	case http.StatusPreconditionFailed:
		err = &apierrors.Error{Status: status, Type: apierrors.TypeInvalidRequest, Code: codePreconditionFailed,
			Message: fmt.Sprintf("The %s of video task %s does not match the request's If-Match or If-Unmodified-Since.", v, id)}
	default:
		err = apierrors.Internal(fmt.Errorf("videos: serving the %s of task %s: %d %s", v, id, status, http.StatusText(status)))
	}
	h.content.Write(w, r, err)
}

// The codes of the content endpoint's 416 and 412, which the spec's
// table does not have.
const (
	codeRangeNotSatisfiable apierrors.Code = "range_not_satisfiable"
	codePreconditionFailed  apierrors.Code = "precondition_failed"
)

// redirectOrProxy answers for content at u: 301 with Location, or, with
// WithContentProxy, the bytes fetched from u. A URL that is not an
// absolute http or https URL (javascript:, data:, a relative path…) is
// neither redirected to nor fetched: 502.
func (h *handler) redirectOrProxy(w http.ResponseWriter, r *http.Request, id string, v Variant, u, contentType string) {
	if err := checkContentURL(u); err != nil {
		h.content.Write(w, r, apierrors.BadGateway(fmt.Sprintf("The %s of video task %s is at a location that the gateway does not serve.", v, id), err))
		return
	}
	if h.cfg.proxy == nil {
		hd := w.Header()
		hd.Set("Location", u)
		// A redirect to a signed URL must not be remembered after it
		// expires: browsers cache a 301 forever unless told otherwise.
		hd.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	h.proxy(w, r, id, v, u, contentType)
}

// checkContentURL accepts absolute http and https URLs with a host.
func checkContentURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("videos: content URL does not parse: %w", err)
	}
	if s := strings.ToLower(p.Scheme); (s != "http" && s != "https") || p.Host == "" {
		return fmt.Errorf("videos: content URL of scheme %s and host %s, not an absolute http(s) URL", apierrors.Quote(p.Scheme), apierrors.Quote(p.Host))
	}
	return nil
}

// The request headers passed to the origin, and the reply headers passed
// back, when streaming (Content-Type checked as stored content is).
var (
	proxyRequestHeaders = []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"}
	proxyReplyHeaders   = []string{"Content-Length", "Content-Range", "Accept-Ranges", "ETag", "Last-Modified"}
)

func defaultProxyClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialer.DialContext
	tr.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: tr}
}

// proxy streams the content at u to the client, passing range and
// conditional requests through.
func (h *handler) proxy(w http.ResponseWriter, r *http.Request, id string, v Variant, u, contentType string) {
	method := http.MethodGet
	if r.Method == http.MethodHead {
		method = http.MethodHead
	}
	req, err := http.NewRequestWithContext(r.Context(), method, u, nil)
	if err != nil {
		h.content.Write(w, r, apierrors.Internal(fmt.Errorf("videos: content URL %q: %w", u, err)))
		return
	}
	for _, k := range proxyRequestHeaders {
		if vs := r.Header.Values(k); len(vs) > 0 {
			req.Header[k] = vs
		}
	}
	res, err := h.cfg.proxy.Do(req)
	if err != nil {
		if r.Context().Err() != nil {
			h.content.Write(w, r, r.Context().Err())
			return
		}
		h.content.Write(w, r, apierrors.BadGateway(fmt.Sprintf("The %s of video task %s could not be fetched from storage.", v, id), err))
		return
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK, http.StatusPartialContent, http.StatusNotModified:
	case http.StatusRequestedRangeNotSatisfiable, http.StatusPreconditionFailed:
		h.writeContentError(w, r, id, v, res.StatusCode, rangeSize(res.Header))
		return
	case http.StatusNotFound, http.StatusGone:
		h.content.Write(w, r, apierrors.NotFound(fmt.Sprintf("The %s of video task %s is no longer available.", v, id)))
		return
	default:
		h.content.Write(w, r, apierrors.BadGateway(fmt.Sprintf("Storage answered %d for the %s of video task %s.", res.StatusCode, v, id),
			fmt.Errorf("videos: GET %s: %s", u, res.Status)))
		return
	}
	hd := w.Header()
	for _, k := range proxyReplyHeaders {
		if vs := res.Header.Values(k); len(vs) > 0 {
			hd[k] = vs
		}
	}
	if ct := res.Header.Get("Content-Type"); ct != "" {
		contentType = ct
	}
	if res.StatusCode != http.StatusNotModified {
		setMediaHeaders(hd, id, v, contentType)
	} else {
		hd.Set("Cache-Control", contentCacheControl)
	}
	w.WriteHeader(res.StatusCode)
	if method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, res.Body)
}
