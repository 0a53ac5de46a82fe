package videos

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

// maxURLLength bounds an http(s) URL given as an image or asset.
const maxURLLength = 8 << 10

// maxFormField bounds a text form field other than an image URL.
const maxFormField = 64 << 10

// decodeCreate reads the body of POST /v1/videos, JSON or multipart,
// within the limits of c.
func decodeCreate(w http.ResponseWriter, r *http.Request, c *config) (*CreateRequest, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	var req *CreateRequest
	switch {
	case ct == "" || err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")):
		body, err := httpjson.ReadBody(w, r, c.maxBytes)
		if err != nil {
			return nil, err
		}
		if req, err = DecodeCreateJSON(body); err != nil {
			return nil, err
		}
	case err == nil && mt == "multipart/form-data":
		if params["boundary"] == "" {
			return nil, apierrors.InvalidRequest("", "Content-Type multipart/form-data needs a boundary parameter")
		}
		if r.ContentLength > c.maxBytes {
			return nil, httpjson.TooLarge(c.maxBytes)
		}
		body := http.MaxBytesReader(w, r.Body, c.maxBytes)
		if req, err = decodeMultipart(body, params["boundary"], c.maxImageBytes, c.maxFormFields); err != nil {
			return nil, err
		}
	default:
		return nil, apierrors.InvalidRequestf("", "Content-Type must be application/json or multipart/form-data, got %s", apierrors.Quote(ct))
	}
	var ref map[string]json.RawMessage
	if req.InputReference != nil {
		ref = req.InputReference.Extra
	}
	if err := checkExtra(c.maxExtraBytes, req.Extra, ref); err != nil {
		return nil, err
	}
	return req, nil
}

// checkExtra refuses unmodelled fields (the Extra maps of a request and
// of its parts) whose names and values take more than limit bytes in
// all: a task keeps them for as long as it is stored. The message names
// the largest field.
func checkExtra(limit int64, extras ...map[string]json.RawMessage) error {
	var (
		total   int64
		largest string
		most    int
	)
	for _, m := range extras {
		for k, v := range m {
			n := len(k) + len(v)
			total += int64(n)
			if n > most || n == most && k < largest {
				largest, most = k, n
			}
		}
	}
	if total <= limit {
		return nil
	}
	return apierrors.InvalidRequestf(largest, "the fields this gateway does not model (the largest is %s, %s) take %s, more than the %s limit",
		apierrors.Quote(largest), httpjson.FormatBytes(int64(most)), httpjson.FormatBytes(total), httpjson.FormatBytes(limit))
}

// DecodeCreateJSON decodes a JSON body of POST /v1/videos. Errors are
// *apierrors.Error values (400) saying what is wrong. It checks the
// syntax and the types only; the handler checks the values against the
// model.
func DecodeCreateJSON(body []byte) (*CreateRequest, error) {
	var req CreateRequest
	if err := httpjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// DecodeCreateMultipart decodes a multipart/form-data body of
// POST /v1/videos, as the official SDKs send it: the fields model,
// prompt, size and seconds as text; input_reference as a file, or as text
// (a URL, a data URI, or a JSON object); input_reference[image_url] and
// input_reference[file_id] as text (the SDKs' form of the object). Other
// text fields are kept in Extra as JSON strings. An uploaded file larger
// than maxImage, or that is not a PNG, JPEG or WebP image, is refused;
// an accepted one becomes a data URI in InputReference.ImageURL. Errors
// are *apierrors.Error values (400).
//
// A form of more than [DefaultMaxFormFields] fields is refused; the
// handler's limit is set by [WithMaxFormFields].
func DecodeCreateMultipart(body io.Reader, boundary string, maxImage int64) (*CreateRequest, error) {
	return decodeMultipart(body, boundary, maxImage, DefaultMaxFormFields)
}

func decodeMultipart(body io.Reader, boundary string, maxImage int64, maxFields int) (*CreateRequest, error) {
	if maxImage <= 0 {
		maxImage = DefaultMaxImageBytes
	}
	if maxFields <= 0 {
		maxFields = DefaultMaxFormFields
	}
	mr := multipart.NewReader(body, boundary)
	var (
		req   CreateRequest
		seen  = map[string]bool{}
		ref   InputReference
		parts int
	)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, formError(err)
		}
		if parts == maxFields {
			return nil, apierrors.InvalidRequestf("", "the multipart form has more than %d fields", maxFields)
		}
		name := part.FormName()
		if name == "" {
			return nil, apierrors.InvalidRequest("", "every part of the multipart form needs a name")
		}
		if seen[name] {
			return nil, apierrors.InvalidRequestf(name, "form field %s appears more than once", apierrors.Quote(name))
		}
		seen[name] = true
		parts++

		if part.FileName() != "" {
			if name != "input_reference" {
				return nil, apierrors.InvalidRequestf(name, "form field %s must not be a file; only input_reference is", apierrors.Quote(name))
			}
			data, err := readLimited(part, maxImage)
			if err != nil {
				if errors.Is(err, errTooLong) {
					return nil, apierrors.InvalidRequestf("input_reference", "the input_reference file is larger than the %s limit", httpjson.FormatBytes(maxImage))
				}
				return nil, formError(err)
			}
			typ, err := sniffImage(data)
			if err != nil {
				return nil, apierrors.InvalidRequestf("input_reference", "the input_reference file %s", err.Error())
			}
			ref.ImageURL = "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(data)
			continue
		}

		limit := int64(maxFormField)
		if strings.HasPrefix(name, "input_reference") {
			limit = maxImage*4/3 + 1024 // a data URI
		}
		raw, err := readLimited(part, limit)
		if err != nil {
			if errors.Is(err, errTooLong) {
				return nil, apierrors.InvalidRequestf(name, "form field %s is longer than %s", apierrors.Quote(name), httpjson.FormatBytes(limit))
			}
			return nil, formError(err)
		}
		value := string(raw)
		switch name {
		case "model":
			req.Model = value
		case "prompt":
			req.Prompt = value
		case "size":
			req.Size = strings.TrimSpace(value)
		case "seconds":
			req.Seconds = Seconds(strings.TrimSpace(value))
		case "input_reference":
			if v := strings.TrimSpace(value); strings.HasPrefix(v, "{") {
				if err := json.Unmarshal([]byte(v), &ref); err != nil {
					return nil, apierrors.InvalidRequest("input_reference", "form field input_reference holds invalid JSON").WithCause(err)
				}
			} else {
				ref.ImageURL = v
			}
		case "input_reference[image_url]", "input_reference.image_url":
			ref.ImageURL = strings.TrimSpace(value)
		case "input_reference[file_id]", "input_reference.file_id":
			ref.FileID = strings.TrimSpace(value)
		default:
			if req.Extra == nil {
				req.Extra = map[string]json.RawMessage{}
			}
			b, _ := json.Marshal(value)
			req.Extra[name] = b
		}
	}
	if parts == 0 {
		return nil, apierrors.InvalidRequest("", "the multipart form is empty")
	}
	if ref.ImageURL != "" || ref.FileID != "" || ref.Extra != nil {
		req.InputReference = &ref
	}
	return &req, nil
}

var errTooLong = errors.New("too long")

func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLong
	}
	return b, nil
}

// formError turns an error reading the multipart body into a 400.
func formError(err error) error {
	var (
		mbe *http.MaxBytesError
		api *apierrors.Error
	)
	switch {
	case errors.As(err, &api):
		return api // from a middleware's body reader
	case errors.As(err, &mbe):
		return httpjson.TooLarge(mbe.Limit)
	}
	return apierrors.InvalidRequest("", "the multipart form could not be read: "+err.Error()).WithCause(err)
}

// The image types accepted as references, by sniffed media type.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true}

// sniffImage returns the media type of data if it is a PNG, JPEG or WebP
// image, and otherwise an error completing the phrase "the file …".
func sniffImage(data []byte) (string, error) {
	if len(data) == 0 {
		return "", errors.New("is empty")
	}
	typ := http.DetectContentType(data)
	if !imageTypes[typ] {
		return "", fmt.Errorf("must be a PNG, JPEG or WebP image, but its content is %s", typ)
	}
	return typ, nil
}

// DecodeDataURI decodes a base64 data URI ("data:image/png;base64,…")
// and returns its declared media type and its bytes. Generators use it to
// read the reference images that the handler checked.
func DecodeDataURI(s string) (mediaType string, data []byte, err error) {
	rest, ok := cutPrefixFold(s, "data:")
	if !ok {
		return "", nil, errors.New("not a data URI")
	}
	meta, payload, ok := strings.Cut(rest, ",")
	if !ok {
		return "", nil, errors.New("a data URI needs a comma before its data")
	}
	params := strings.Split(meta, ";")
	if len(params) < 2 || !strings.EqualFold(strings.TrimSpace(params[len(params)-1]), "base64") {
		return "", nil, errors.New("a data URI must be base64-encoded (data:<type>;base64,<data>)")
	}
	data, err = decodeBase64(payload)
	if err != nil {
		return "", nil, errors.New("the data URI's base64 data is invalid")
	}
	return strings.ToLower(strings.TrimSpace(params[0])), data, nil
}

func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("invalid base64")
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// mediaKind selects what a referenced URL or data URI must hold.
type mediaKind int

const (
	kindImage mediaKind = iota
	kindVideo
)

// checkMediaRef checks an image or video reference: an absolute http(s)
// URL (not fetched), or a base64 data URI whose bytes sniff as an
// accepted image (or a video, for kindVideo) no larger than maxImage
// (images only; videos are bounded by the request size). param names the
// field in messages.
func checkMediaRef(param, s string, kind mediaKind, maxImage int64) error {
	if s == "" {
		return apierrors.InvalidRequestf(param, "%s is required", param)
	}
	if _, ok := cutPrefixFold(s, "data:"); ok {
		if kind == kindImage {
			_, payload, _ := strings.Cut(s, ",")
			if int64(base64.StdEncoding.DecodedLen(len(payload))) > maxImage+3 {
				return apierrors.InvalidRequestf(param, "the image in %s is larger than the %s limit", param, httpjson.FormatBytes(maxImage))
			}
		}
		declared, data, err := DecodeDataURI(s)
		if err != nil {
			return apierrors.InvalidRequestf(param, "%s: %s", param, err.Error())
		}
		switch kind {
		case kindImage:
			if int64(len(data)) > maxImage {
				return apierrors.InvalidRequestf(param, "the image in %s is larger than the %s limit", param, httpjson.FormatBytes(maxImage))
			}
			if declared != "" && !strings.HasPrefix(declared, "image/") {
				return apierrors.InvalidRequestf(param, "%s must be an image data URI, got type %s", param, apierrors.Quote(declared))
			}
			if _, err := sniffImage(data); err != nil {
				return apierrors.InvalidRequestf(param, "the data URI in %s %s", param, err.Error())
			}
		case kindVideo:
			if typ := http.DetectContentType(data); !strings.HasPrefix(typ, "video/") {
				return apierrors.InvalidRequestf(param, "the data URI in %s must hold a video, but its content is %s", param, typ)
			}
		}
		return nil
	}
	if len(s) > maxURLLength {
		return apierrors.InvalidRequestf(param, "%s is longer than %s", param, httpjson.FormatBytes(maxURLLength))
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return apierrors.InvalidRequestf(param, "%s must be an http(s) URL or a base64 data URI, got %s", param, apierrors.Quote(s))
	}
	return nil
}

// decodeMultimodal reads the JSON body of POST /v1/vendorai/videos,
// within the limits of c.
func decodeMultimodal(w http.ResponseWriter, r *http.Request, c *config) (*MultimodalRequest, error) {
	var req MultimodalRequest
	if err := httpjson.Decode(w, r, c.maxBytes, &req); err != nil {
		return nil, err
	}
	extras := make([]map[string]json.RawMessage, 0, 1+len(req.Assets))
	extras = append(extras, req.Extra)
	for _, a := range req.Assets {
		extras = append(extras, a.Extra)
	}
	if err := checkExtra(c.maxExtraBytes, extras...); err != nil {
		return nil, err
	}
	return &req, nil
}

// DecodeMultimodalJSON decodes a JSON body of POST /v1/vendorai/videos,
// with the errors of [DecodeCreateJSON].
func DecodeMultimodalJSON(body []byte) (*MultimodalRequest, error) {
	var req MultimodalRequest
	if err := httpjson.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	return &req, nil
}
