package images

import (
	"context"
	"strconv"
	"strings"

	"github.com/gatewaykit/gatewaykit/models"
)

// The limits of a request.
const (
	// MaxImages is the largest n of a request, as in OpenAI's API.
	MaxImages = 10
	// MaxPromptChars is the longest prompt accepted, in characters (that
	// of OpenAI's gpt-image models).
	MaxPromptChars = 32000
)

// The values of response_format.
const (
	// FormatURL answers each image with a URL (the default, as in OpenAI's
	// API for dall-e models).
	FormatURL = "url"
	// FormatB64JSON answers each image with its bytes in base64.
	FormatB64JSON = "b64_json"
)

// Request is the body of POST /v1/images/generations. Only Model and
// Prompt are required; the handler checks the form of the others, the
// backend whether it supports their values.
type Request struct {
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	// N is the number of images, 1 to MaxImages; 0 means 1.
	N int `json:"n,omitempty"`
	// Size is "auto", or "<width>x<height>" in pixels; empty means the
	// backend's default.
	Size string `json:"size,omitempty"`
	// Quality, Style, Background and Moderation are passed to the
	// backend as they are.
	Quality    string `json:"quality,omitempty"`
	Style      string `json:"style,omitempty"`
	Background string `json:"background,omitempty"`
	Moderation string `json:"moderation,omitempty"`
	// ResponseFormat is FormatURL (also when empty) or FormatB64JSON.
	ResponseFormat string `json:"response_format,omitempty"`
	// OutputFormat is the image file format: "png", "jpeg" or "webp"; empty
	// means the backend's default.
	OutputFormat string `json:"output_format,omitempty"`
	// OutputCompression is the compression level (0-100) of jpeg and webp
	// images; nil means the backend's default.
	OutputCompression *int   `json:"output_compression,omitempty"`
	User              string `json:"user,omitempty"`
}

// Count returns the number of images asked for: N, or 1.
func (r *Request) Count() int { return max(r.N, 1) }

// Dimensions returns the width and height of Size, and false if Size is
// empty, "auto" or not of the form "<width>x<height>" with positive
// numbers.
func (r *Request) Dimensions() (w, h int, ok bool) {
	ws, hs, found := strings.Cut(r.Size, "x")
	if !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, false
	}
	return w, h, true
}

// A Backend generates images. The handler owns the wire (created, the
// data items in the response format asked for, the URLs it serves); a
// Backend only says what it drew.
//
// Generate returns p.Request.Count() images, in order. For
// response_format b64_json each must carry its Data; for url, each must
// carry either a URL where the client can fetch it, or Data from a
// backend that is also a [Redrawer] (the handler then serves it under a
// signed URL of its own, see the package documentation). The context is
// the request's: it is cancelled when the client goes away, and Generate
// should then return promptly. To send a client-facing error (a size the
// model cannot draw, say), return or wrap an *apierrors.Error; any other
// error is answered as a 500 whose text is only logged. Backends must be
// safe for concurrent use and must not modify p.
type Backend interface {
	Generate(ctx context.Context, p *Params) (*Result, error)
}

// A Redrawer is a [Backend] whose images depend on their request only:
// Redraw returns the image of index i (0-based) of the request p again,
// the same bytes as Generate returned for it. The handler serves the
// response_format url of such a backend without storing anything: the
// URL it sends encodes the request, and a GET of it redraws the image.
// Redraw has Generate's error contract.
type Redrawer interface {
	Backend
	Redraw(ctx context.Context, p *Params, i int) (*Image, error)
}

// Params is what a [Backend] is asked: the decoded and validated request,
// and the catalogue entry of its model. Read them, do not modify them.
type Params struct {
	Request *Request
	Model   *models.Model
}

// Result is a backend's reply.
type Result struct {
	// Images holds one image per image asked for, in order.
	Images []Image
	// Size, Quality, Background and OutputFormat describe the images,
	// and are sent as the reply's members of the same names when set.
	Size, Quality, Background, OutputFormat string
	// Usage is the tokens read and written, sent as "usage" and charged
	// to the API key; nil sends none, and charges the prompt's estimate.
	Usage *Usage
	// Model is the model that answered; empty means the request's.
	Model string
}

// Image is one generated image.
type Image struct {
	// Data is the image file (PNG, JPEG…).
	Data []byte
	// ContentType is Data's media type, sent with the file served at its
	// URL; empty means it is sniffed (http.DetectContentType).
	ContentType string
	// URL is where the client fetches the image, for a backend that
	// stores its images itself; empty means the handler's own URL.
	URL string
	// RevisedPrompt is the prompt as the model rewrote it, sent as
	// revised_prompt when set.
	RevisedPrompt string
}

// Usage is the tokens of an image generation.
type Usage struct {
	// InputTokens are the prompt's tokens (text; images given as input
	// would count too).
	InputTokens int
	// OutputTokens are the generated images' tokens.
	OutputTokens int
}
