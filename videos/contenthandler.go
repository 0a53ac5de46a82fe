package videos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// serveContent serves GET and HEAD /v1/videos/{task_id}/content, every
// row of the table of spec §4.7.
func (h *handler) serveContent(w http.ResponseWriter, r *http.Request, owner, id string) {
	variant := VariantVideo
	if v := r.URL.Query().Get("variant"); v != "" {
		variant = Variant(v)
		if !variant.Valid() {
			h.content.Write(w, r, apierrors.InvalidRequestf("variant", `variant must be "video" or "thumbnail", got %s`, apierrors.Quote(string(variant))))
			return
		}
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
	hd.Set("Content-Type", c.ContentType)
	hd.Set("Content-Disposition", contentDisposition(t.ID, variant, c.ContentType))
	hd.Set("ETag", `"`+t.ID+"-"+string(variant)+`"`) // content never changes
	hd.Set("Cache-Control", "private, max-age=86400")
	http.ServeContent(w, r, "", c.ModTime, c.Body)
}

// redirectOrProxy answers for content at u: 301 with Location, or, with
// WithContentProxy, the bytes fetched from u.
func (h *handler) redirectOrProxy(w http.ResponseWriter, r *http.Request, id string, v Variant, u, contentType string) {
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

// The request headers passed to the origin, and the reply headers passed
// back, when streaming.
var (
	proxyRequestHeaders = []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"}
	proxyReplyHeaders   = []string{"Content-Type", "Content-Length", "Content-Range", "Accept-Ranges", "ETag", "Last-Modified"}
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
	case http.StatusOK, http.StatusPartialContent, http.StatusNotModified, http.StatusRequestedRangeNotSatisfiable:
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
	if hd.Get("Content-Type") == "" && contentType != "" {
		hd.Set("Content-Type", contentType)
	}
	hd.Set("Content-Disposition", contentDisposition(id, v, hd.Get("Content-Type")))
	hd.Set("Cache-Control", "private, max-age=86400")
	w.WriteHeader(res.StatusCode)
	if method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, res.Body)
}
