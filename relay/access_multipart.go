package relay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

// Multipart uploads (the audio transcription and translation endpoints)
// name their model in a form field, which may come before or after the
// file: curl -F sends fields in the order given, while the official Go SDK
// sorts them, so its "file" precedes its "model". The handler reads the
// client's parts in order until the model field:
//
//   - parts before it are spooled: in memory up to spoolMemory bytes in
//     all, in a temporary file (os.CreateTemp, removed when the request
//     ends) beyond;
//   - then the model is checked, and the upstream request starts: the
//     spooled parts, the model field renamed to the upstream's name, then
//     the client's remaining parts, read from the client only as the
//     upstream reads them, never held whole.
//
// A client that sends the model first has its file streamed straight
// through. Each part keeps its headers (file name, content type; written
// anew, so the upstream body's length is not known in advance and it is
// sent chunked); the body keeps the client's boundary. The model field is the first part
// named "model" (a file or not); any later one is dropped, so the upstream
// sees only the model that was checked.

// spoolMemory is how much of the parts before the model field the handler
// keeps in memory before it spools to a temporary file.
const spoolMemory = 256 << 10

// maxFormParts bounds the parts read before the model field.
const maxFormParts = 1000

// maxModelField bounds the model field's value.
const maxModelField = 1 << 10

// serveMultipart relays a multipart/form-data access point.
func (h *accessHandler) serveMultipart(w http.ResponseWriter, r *http.Request, ep *endpoint) error {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	boundary := params["boundary"]
	if err != nil || mt != "multipart/form-data" || boundary == "" {
		return apierrors.InvalidRequestf("", "Content-Type must be multipart/form-data with a boundary, got %s", apierrors.Quote(r.Header.Get("Content-Type")))
	}
	if multipart.NewWriter(io.Discard).SetBoundary(boundary) != nil {
		return apierrors.InvalidRequestf("", "the multipart boundary %s is not valid (RFC 2046: 1 to 70 letters, digits and '()+_,-./:=? characters)", apierrors.Quote(boundary))
	}
	limit := h.cfg.maxBytes
	if r.ContentLength > limit {
		return httpjson.TooLarge(limit)
	}
	mr := multipart.NewReader(http.MaxBytesReader(w, r.Body, limit), boundary)
	fm, err := readForm(mr)
	defer fm.close()
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return httpjson.TooLarge(limit)
		case r.Context().Err() != nil:
			return r.Context().Err() // the client has gone: nothing to answer
		}
		return err
	}
	if fb := h.fallbackFor(ep, fm.model); fb != nil {
		r.Body = io.NopCloser(fm.encoder(boundary, fm.model))
		r.ContentLength = -1
		r.Header.Del("Content-Length")
		fb.ServeHTTP(w, r)
		return nil
	}
	ctx := r.Context()
	if err := h.check(ctx, ep, fm.model); err != nil {
		return err
	}
	if err := h.reserve(ctx, 0); err != nil {
		return err
	}
	body := newStreamBody(func(u *Upstream) io.Reader { return fm.encoder(boundary, u.Model) })
	res, u, err := h.relay.Do(ctx, fm.model, func(u *Upstream) (*http.Request, error) {
		b, err := body.attempt(u)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequest(http.MethodPost, u.URL(ep.path), b)
		if err != nil {
			return nil, err
		}
		// The client's boundary frames the upstream body too: no part's
		// content can hold it, since the client's body was framed by it.
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		h.setHeaders(r, req, ep.format)
		return req, nil
	})
	if body.tooLarge() {
		if res != nil {
			res.Body.Close()
		}
		return httpjson.TooLarge(limit)
	}
	if err != nil {
		return err
	}
	return h.reply(w, r, ep.format, res, u)
}

// form is a multipart body read up to its model field.
type form struct {
	parts       []formPart // the parts before the model field, spooled
	spool       spool
	model       string
	modelHeader textproto.MIMEHeader
	rest        *multipart.Reader // positioned after the model field; nil without one
}

// formPart is a spooled part: its headers, and where its content is in
// the spool.
type formPart struct {
	header textproto.MIMEHeader
	off, n int64
}

// readForm reads mr's parts up to and including the model field. Without
// a model field it reads every part and leaves form.model empty. Errors
// are 400s for a malformed body, or the reader's own (the size limit's
// *http.MaxBytesError, the client's departure).
func readForm(mr *multipart.Reader) (*form, error) {
	f := &form{}
	for {
		part, err := mr.NextRawPart()
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return f, formError(err)
		}
		if part.FormName() == "model" {
			v, err := io.ReadAll(io.LimitReader(part, maxModelField+1))
			if err != nil {
				return f, formError(err)
			}
			if len(v) > maxModelField {
				return f, apierrors.InvalidRequestf("model", "model is longer than %d bytes", maxModelField)
			}
			f.model, f.modelHeader, f.rest = string(v), part.Header, mr
			return f, nil
		}
		if len(f.parts) == maxFormParts {
			return f, apierrors.InvalidRequestf("", "the multipart body has more than %d parts before its model field", maxFormParts)
		}
		off := f.spool.size
		if _, err := io.Copy(&f.spool, part); err != nil {
			return f, formError(err)
		}
		f.parts = append(f.parts, formPart{header: part.Header, off: off, n: f.spool.size - off})
	}
}

// formError is the client's error for a failure to read its multipart
// body: the reader's own error when it is the size limit or an error
// already meant for the client, else a 400 naming the problem.
func formError(err error) error {
	var (
		mbe *http.MaxBytesError
		api *apierrors.Error
	)
	if errors.As(err, &mbe) || errors.As(err, &api) || errors.Is(err, os.ErrClosed) {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return apierrors.InvalidRequest("", "the multipart body ends before its closing boundary").WithCause(err)
	}
	return apierrors.InvalidRequest("", "the multipart body is malformed: "+err.Error()).WithCause(err)
}

func (f *form) close() {
	if f != nil {
		f.spool.close()
	}
}

// encoder returns a reader of the upstream body: the spooled parts, the
// model field with the upstream's model name, then the rest of the
// client's parts, read as the upstream reads.
func (f *form) encoder(boundary, model string) io.Reader {
	e := &formEncoder{f: f, model: model}
	e.mw = multipart.NewWriter(&e.buf)
	_ = e.mw.SetBoundary(boundary) // checked by validBoundary
	return e
}

// formEncoder produces a multipart body on demand: it frames parts with
// multipart.Writer into buf and hands the parts' contents through
// unbuffered.
type formEncoder struct {
	f     *form
	model string
	mw    *multipart.Writer
	buf   bytes.Buffer
	next  int       // the next spooled part
	cur   io.Reader // the content of the current part
	stage uint8
}

const (
	stageSpooled uint8 = iota
	stageModel
	stageRest
	stageClose
	stageDone
)

func (e *formEncoder) Read(p []byte) (int, error) {
	for {
		if e.buf.Len() > 0 {
			return e.buf.Read(p)
		}
		if e.cur != nil {
			n, err := e.cur.Read(p)
			if err == io.EOF {
				e.cur, err = nil, nil
			}
			if n > 0 || err != nil {
				return n, err
			}
			continue
		}
		if e.stage == stageDone {
			return 0, io.EOF
		}
		if err := e.advance(); err != nil {
			return 0, err
		}
	}
}

// advance starts the next part (or closes the body), writing its framing
// into buf and setting cur to its content.
func (e *formEncoder) advance() error {
	switch e.stage {
	case stageSpooled:
		if e.next == len(e.f.parts) {
			e.stage = stageModel
			return nil
		}
		part := e.f.parts[e.next]
		e.next++
		e.cur = io.NewSectionReader(&e.f.spool, part.off, part.n)
		_, err := e.mw.CreatePart(part.header)
		return err
	case stageModel:
		e.stage = stageRest
		if e.f.rest == nil {
			return nil
		}
		e.cur = strings.NewReader(e.model)
		_, err := e.mw.CreatePart(e.f.modelHeader)
		return err
	case stageRest:
		if e.f.rest == nil {
			e.stage = stageClose
			return nil
		}
		part, err := e.f.rest.NextRawPart()
		if err == io.EOF {
			e.stage = stageClose
			return nil
		}
		if err != nil {
			return formError(err)
		}
		if part.FormName() == "model" {
			return nil // a second model field: dropped (see above)
		}
		e.cur = part
		_, err = e.mw.CreatePart(part.Header)
		return err
	case stageClose:
		e.stage = stageDone
		return e.mw.Close()
	}
	return fmt.Errorf("relay: form encoder in stage %d", e.stage)
}

// spool holds the parts before the model field: in memory up to
// spoolMemory bytes, then in a temporary file.
type spool struct {
	mem  []byte
	file *os.File
	size int64
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && len(s.mem)+len(p) <= spoolMemory {
		s.mem = append(s.mem, p...)
		s.size += int64(len(p))
		return len(p), nil
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "gatewaykit-relay-*.part")
		if err != nil {
			return 0, apierrors.Internal(fmt.Errorf("relay: spooling an upload: %w", err))
		}
		s.file = f
		if _, err := f.Write(s.mem); err != nil {
			return 0, apierrors.Internal(fmt.Errorf("relay: spooling an upload: %w", err))
		}
		s.mem = nil
	}
	n, err := s.file.Write(p)
	s.size += int64(n)
	if err != nil {
		return n, apierrors.Internal(fmt.Errorf("relay: spooling an upload: %w", err))
	}
	return n, nil
}

func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	if s.file != nil {
		return s.file.ReadAt(p, off)
	}
	if off >= int64(len(s.mem)) {
		return 0, io.EOF
	}
	n := copy(p, s.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// close removes the temporary file, if any.
func (s *spool) close() {
	if s.file != nil {
		name := s.file.Name()
		_ = s.file.Close()
		_ = os.Remove(name)
		s.file = nil
	}
}
