// Package mediareply sets the headers of the replies that carry media
// bytes from a backend or an upstream (video content, image files, speech
// audio), so that a browser never runs them as a page on the gateway's
// origin, where the console keeps its keys: whatever the bytes claim to
// be, a reply is sent as one of the media types its kind of content may
// have, or as application/octet-stream for download, never sniffed, and
// sandboxed.
package mediareply

import (
	"errors"
	"mime"
	"net/http"
	"slices"
	"strconv"
)

// OctetStream is the type of a reply whose declared type is not one of
// its [Types].
const OctetStream = "application/octet-stream"

// SandboxPolicy is the Content-Security-Policy of media replies: a
// browser that renders one anyway (as a document, in a frame) gives it an
// opaque origin and runs none of its scripts.
const SandboxPolicy = "sandbox"

// Types is the media types (lower-case type/subtype) that a kind of reply
// may carry.
type Types []string

// The types of each kind of media reply.
var (
	// Video is what the content endpoint serves: a video or its
	// thumbnail.
	Video = Types{"video/mp4", "video/webm", "image/png", "image/jpeg", "image/webp"}
	// Image is what an image file may be.
	Image = Types{"image/png", "image/jpeg", "image/webp", "image/gif"}
	// Audio is what synthesised speech may be, in the formats of
	// audio.Speech (mp3, opus, aac, flac, wav, pcm) and their common
	// spellings.
	Audio = Types{"audio/mpeg", "audio/mp3", "audio/opus", "audio/ogg", "audio/aac", "audio/flac",
		"audio/wav", "audio/wave", "audio/x-wav", "audio/pcm", "audio/l16"}
)

// Type returns the type to send for content declared as contentType: its
// media type, parameters included, if ts holds it, and else
// [OctetStream], with ok false.
func (ts Types) Type(contentType string) (typ string, ok bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if errors.Is(err, mime.ErrInvalidMediaParameter) {
		err, params = nil, nil // the type, as a browser reads it
	}
	if err != nil || !slices.Contains(ts, mt) {
		return OctetStream, false
	}
	if typ = mime.FormatMediaType(mt, params); typ == "" {
		typ = mt
	}
	return typ, true
}

// Set sets the headers of a reply of content declared as contentType on
// h: Content-Type ([Types.Type]), X-Content-Type-Options: nosniff and
// Content-Security-Policy: sandbox; and, for a type that ts does not
// hold, Content-Disposition: attachment, keeping the file name of a
// disposition already set. It reports whether the type was one of ts.
func (ts Types) Set(h http.Header, contentType string) bool {
	typ, ok := ts.Type(contentType)
	h.Set("Content-Type", typ)
	Protect(h)
	if !ok {
		d := "attachment"
		if _, params, err := mime.ParseMediaType(h.Get("Content-Disposition")); err == nil && params["filename"] != "" {
			d = mime.FormatMediaType("attachment", map[string]string{"filename": params["filename"]})
		}
		h.Set("Content-Disposition", d)
	}
	return ok
}

// Protect sets X-Content-Type-Options: nosniff and
// Content-Security-Policy: sandbox on h: the headers of every media reply,
// and of other replies whose bytes come from elsewhere.
func Protect(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", SandboxPolicy)
}

// Write answers 200 with data, a file of one of ts: its type is
// contentType, or the one http.DetectContentType sniffs when that is
// empty, set as [Types.Set] does, with its Content-Length. The headers
// the caller set before stay. head leaves the body out (a HEAD request).
func (ts Types) Write(w http.ResponseWriter, contentType string, data []byte, head bool) {
	if contentType == "" {
		contentType = http.DetectContentType(data)
	}
	h := w.Header()
	ts.Set(h, contentType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if !head {
		_, _ = w.Write(data)
	}
}
