package images

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"path"
	"time"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/mediareply"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/internal/served"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/route"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The routes served by [NewHandler], in [http.ServeMux] syntax: image
// generation, and the image files of its url replies. [Register] mounts
// both.
const (
	Pattern     = "POST /v1/images/generations"
	PatternFile = "GET /v1/images/files/{name}"
)

// filePath is the path of PatternFile without its wildcard.
const filePath = "/v1/images/files/"

// An Option configures [NewHandler]: an option of package [endpoint] of
// type [endpoint.Option], [endpoint.ValidatorOption] or
// [endpoint.ClockOption] (see the table of its Options: the handler does
// not stream), and this package's own, [WithURLKey] and [WithPublicURL].
// An option of another package, such as responses.WithStore, does not
// compile here.
type Option interface {
	// ApplyToImages applies the option to the handler being made;
	// NewHandler calls it. Only this module's packages implement it.
	ApplyToImages(pipeline.Target)
}

// The option types of package endpoint that are Options.
var _ = []Option{endpoint.Option{}, endpoint.ValidatorOption{}, endpoint.ClockOption{}}

// config is the configuration of a handler: the one common to the
// endpoint packages, and the settings of this package's own options.
type config struct {
	pipeline.Config
	urls urlConfig
}

// option is an option of this package's own: it sets the handler's
// config, which NewHandler gives as the Target.
type option func(*config)

func (o option) ApplyToImages(t pipeline.Target) { o(t.(*config)) }

type handler struct {
	ep      served.Endpoint
	backend Backend
	urls    urlConfig
}

// NewHandler returns the handler of POST /v1/images/generations and of
// GET /v1/images/files/{name}: it decodes and validates a generation
// request, checks the model against catalog (endpoint type
// [models.ImageGeneration]), reserves the request's estimate from the API
// key, asks backend for the images, answers with OpenAI's images object
// (b64_json, or url) and settles the reservation to the backend's usage.
// It serves the files of the URLs it sends. See the package
// documentation.
//
//	images.Register(mux, images.NewHandler(catalog, backend))
//
// NewHandler panics if catalog or backend is nil. The handler is safe for
// concurrent use.
func NewHandler(catalog models.Catalog, backend Backend, opts ...Option) http.Handler {
	if backend == nil {
		panic("images: NewHandler: nil Backend")
	}
	c := config{Config: pipeline.Defaults()}
	pipeline.Apply(&c, opts, Option.ApplyToImages)
	if len(c.urls.key) == 0 {
		c.urls.key = randomKey()
	}
	return &handler{ep: served.New("images", catalog, models.ImageGeneration, c.Config), backend: backend, urls: c.urls}
}

// Routes returns the routes of h, made by [NewHandler]: [Pattern] and
// [PatternFile] (GET, and HEAD), as [route.Route] values that any router
// can mount.
func Routes(h http.Handler) []route.Route {
	return route.List(h, Pattern, PatternFile)
}

// Register mounts h, made by [NewHandler], on mux under [Pattern] and
// [PatternFile], the routes of [Routes]. Like mux.Handle, it panics if a
// pattern is taken.
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		telemetry.SetRoute(r.Context(), PatternFile)
		err = h.serveFile(w, r)
	case http.MethodPost:
		telemetry.SetRoute(r.Context(), Pattern)
		err = h.generate(w, r)
	default:
		err = apierrors.MethodNotAllowed(r.Method, r.URL.Path, []string{http.MethodPost})
	}
	if err != nil {
		h.ep.Fail(w, r, err)
	}
}

func (h *handler) generate(w http.ResponseWriter, r *http.Request) error {
	req, body, err := served.DecodeRequest(&h.ep, w, r, Validate)
	if err != nil {
		return err
	}
	est := served.Tokens(len(body)) + int64(req.Count())*outputEstimate
	return h.ep.Call(r.Context(), req, req.Model, est, func(m *models.Model) (in, out int64, err error) {
		res, err := h.backend.Generate(r.Context(), &Params{Request: req, Model: m})
		if err != nil {
			return 0, 0, served.BackendError("images", err)
		}
		reply, err := h.reply(req, res, h.ep.Cfg.Now())
		if err != nil {
			return 0, 0, err
		}
		if err := httpjson.Write(w, http.StatusOK, reply); err != nil {
			return 0, 0, apierrors.Internal(err)
		}
		if res.Usage != nil {
			return int64(max(res.Usage.InputTokens, 0)), int64(max(res.Usage.OutputTokens, 0)), nil
		}
		return served.Tokens(len(req.Prompt)), 0, nil
	})
}

// outputEstimate is the tokens that a request reserves per image.
const outputEstimate = 1024

// Validate checks a decoded request as the handler does, with the errors
// it sends (400 invalid_request_error naming the field).
func Validate(req *Request) error {
	switch {
	case req.Prompt == "":
		return apierrors.InvalidRequest("prompt", "prompt is required")
	case utf8.RuneCountInString(req.Prompt) > MaxPromptChars:
		return apierrors.InvalidRequestf("prompt", "prompt must be at most %d characters", MaxPromptChars)
	case req.N < 0 || req.N > MaxImages:
		return apierrors.InvalidRequestf("n", "n must be between 1 and %d, got %d", MaxImages, req.N)
	}
	if _, _, ok := req.Dimensions(); !ok && req.Size != "" && req.Size != "auto" {
		return apierrors.InvalidRequestf("size", `size must be "auto" or "<width>x<height>" (such as "1024x1024"), got %s`, apierrors.Quote(req.Size))
	}
	switch req.ResponseFormat {
	case "", FormatURL, FormatB64JSON:
	default:
		return apierrors.InvalidRequestf("response_format", "response_format must be %s or %s, got %s", apierrors.Quote(FormatURL), apierrors.Quote(FormatB64JSON), apierrors.Quote(req.ResponseFormat))
	}
	switch req.OutputFormat {
	case "", "png", "jpeg", "webp":
	default:
		return apierrors.InvalidRequestf("output_format", `output_format must be "png", "jpeg" or "webp", got %s`, apierrors.Quote(req.OutputFormat))
	}
	if c := req.OutputCompression; c != nil && (*c < 0 || *c > 100) {
		return apierrors.InvalidRequestf("output_compression", "output_compression must be between 0 and 100, got %d", *c)
	}
	return nil
}

// Reply is the JSON reply of a generation.
type Reply struct {
	Created      int64        `json:"created"`
	Data         []ReplyImage `json:"data"`
	Background   string       `json:"background,omitempty"`
	OutputFormat string       `json:"output_format,omitempty"`
	Quality      string       `json:"quality,omitempty"`
	Size         string       `json:"size,omitempty"`
	Usage        *ReplyUsage  `json:"usage,omitempty"`
}

// ReplyImage is one image of a [Reply]: B64JSON or URL.
type ReplyImage struct {
	B64JSON       string `json:"b64_json,omitempty"`
	URL           string `json:"url,omitempty"`
	RevisedPrompt string `json:"revised_prompt,omitempty"`
}

// ReplyUsage is the usage of a [Reply], in the shape of OpenAI's gpt-image
// models.
type ReplyUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails struct {
		TextTokens  int `json:"text_tokens"`
		ImageTokens int `json:"image_tokens"`
	} `json:"input_tokens_details"`
}

// reply makes the reply of res, checking that it can be sent.
func (h *handler) reply(req *Request, res *Result, now time.Time) (*Reply, error) {
	switch {
	case res == nil:
		return nil, apierrors.Internal(errors.New("images: backend returned a nil Result and no error"))
	case len(res.Images) != req.Count():
		return nil, apierrors.Internal(fmt.Errorf("images: backend returned %d images for n=%d", len(res.Images), req.Count()))
	}
	_, redraws := h.backend.(Redrawer)
	reply := &Reply{Created: now.Unix(), Data: make([]ReplyImage, len(res.Images)), Background: res.Background,
		OutputFormat: res.OutputFormat, Quality: res.Quality, Size: res.Size}
	for i, img := range res.Images {
		d := ReplyImage{RevisedPrompt: img.RevisedPrompt}
		switch {
		case req.ResponseFormat == FormatB64JSON && len(img.Data) == 0:
			return nil, apierrors.Internal(fmt.Errorf("images: backend returned image %d without Data for b64_json", i))
		case req.ResponseFormat == FormatB64JSON:
			d.B64JSON = base64.StdEncoding.EncodeToString(img.Data)
		case img.URL != "":
			d.URL = img.URL
		case !redraws || len(img.Data) == 0:
			return nil, apierrors.Internal(fmt.Errorf("images: backend returned image %d without a URL, and cannot redraw it", i))
		default:
			name, err := fileName(h.urls.key, newFileRef(req, i, now.Add(URLLifetime)), extension(&img, res.OutputFormat))
			if err != nil {
				return nil, apierrors.Internal(err)
			}
			d.URL = h.urls.base + filePath + name
		}
		reply.Data[i] = d
	}
	if u := res.Usage; u != nil {
		reply.Usage = &ReplyUsage{InputTokens: max(u.InputTokens, 0), OutputTokens: max(u.OutputTokens, 0)}
		reply.Usage.TotalTokens = reply.Usage.InputTokens + reply.Usage.OutputTokens
		reply.Usage.InputTokensDetails.TextTokens = reply.Usage.InputTokens
	}
	return reply, nil
}

// extension returns the file extension of img.
func extension(img *Image, format string) string {
	ct := img.ContentType
	if ct == "" {
		ct = http.DetectContentType(img.Data)
	}
	switch {
	case ct == "image/jpeg" || format == "jpeg":
		return "jpeg"
	case ct == "image/webp" || format == "webp":
		return "webp"
	}
	return "png"
}

// errFileNotFound is the answer for a file name that is malformed, forged
// or expired.
var errFileNotFound = apierrors.NotFound("The image file was not found, or its URL has expired (image URLs work for one hour).")

// serveFile serves GET /v1/images/files/{name}: it redraws the image that
// a signed name encodes.
func (h *handler) serveFile(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	name := r.PathValue("name")
	if name == "" {
		name = path.Base(r.URL.Path)
	}
	ref, err := parseFileName(h.urls.key, name, h.ep.Cfg.Now())
	if err != nil {
		return errFileNotFound.WithCause(err)
	}
	rd, ok := h.backend.(Redrawer)
	if !ok {
		return errFileNotFound
	}
	m, err := models.Require(ctx, h.ep.Catalog, ref.Model, h.ep.Need, h.ep.Cfg.Allow)
	if err != nil {
		return err
	}
	img, err := rd.Redraw(ctx, &Params{Request: ref.request(), Model: m}, ref.Index)
	if err != nil {
		return served.BackendError("images", err)
	}
	if img == nil || len(img.Data) == 0 {
		return apierrors.Internal(errors.New("images: Redraw returned no image"))
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	mediareply.Image.Write(w, img.ContentType, img.Data, r.Method == http.MethodHead)
	return nil
}
