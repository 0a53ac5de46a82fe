package demo

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strconv"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/images"
)

// The sizes the demo image model draws.
const (
	// ImageDefaultSize is the size of an image whose request sets none,
	// or "auto".
	ImageDefaultSize = 1024
	// ImageMinSide and ImageMaxSide bound the width and the height.
	ImageMinSide = 16
	ImageMaxSide = 2048
)

// ImageBackend is the demo's images.Backend, and an images.Redrawer: its
// images depend on their request only. Create it with [NewImageBackend];
// it is safe for concurrent use.
type ImageBackend struct{}

// NewImageBackend returns the demo image backend (see the package
// documentation, Images).
func NewImageBackend() *ImageBackend { return &ImageBackend{} }

// Generate draws the images of p.
func (b *ImageBackend) Generate(ctx context.Context, p *images.Params) (*images.Result, error) {
	req := p.Request
	w, h, format, err := imageSpec(req)
	if err != nil {
		return nil, err
	}
	res := &images.Result{Size: strconv.Itoa(w) + "x" + strconv.Itoa(h), OutputFormat: format,
		Quality: req.Quality, Background: req.Background}
	for i := range req.Count() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		img, err := drawImage(req, i, w, h, format)
		if err != nil {
			return nil, err
		}
		res.Images = append(res.Images, *img)
	}
	res.Usage = &images.Usage{InputTokens: CountTokens(req.Prompt), OutputTokens: req.Count() * ((w*h + 4095) / 4096)}
	return res, nil
}

// Redraw draws image i of p again.
func (b *ImageBackend) Redraw(ctx context.Context, p *images.Params, i int) (*images.Image, error) {
	if i < 0 || i >= p.Request.Count() {
		return nil, apierrors.NotFound("demo: no image " + strconv.Itoa(i) + " in this request")
	}
	w, h, format, err := imageSpec(p.Request)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return drawImage(p.Request, i, w, h, format)
}

// imageSpec returns the size and format of req's images, or the 400 for
// what the demo does not draw.
func imageSpec(req *images.Request) (w, h int, format string, err error) {
	w, h = ImageDefaultSize, ImageDefaultSize
	if dw, dh, ok := req.Dimensions(); ok {
		w, h = dw, dh
	}
	if w < ImageMinSide || h < ImageMinSide || w > ImageMaxSide || h > ImageMaxSide {
		return 0, 0, "", apierrors.InvalidRequestf("size", "%s draws sizes from %dx%d to %dx%d, got %s",
			ImageModel, ImageMinSide, ImageMinSide, ImageMaxSide, ImageMaxSide, apierrors.Quote(req.Size))
	}
	switch format = req.OutputFormat; format {
	case "":
		format = "png"
	case "png", "jpeg":
	default:
		return 0, 0, "", apierrors.InvalidRequestf("output_format", "%s draws png and jpeg images, not %s", ImageModel, apierrors.Quote(format))
	}
	return w, h, format, nil
}

// drawImage draws image i of req: a vertical gradient between two colours
// of the prompt, with one disc per word of the prompt (at most 32), each
// placed and coloured by the word's hash; transparent where the
// background is "transparent" (png).
func drawImage(req *images.Request, i, w, h int, format string) (*images.Image, error) {
	seed := hash64(req.Prompt + "\x00" + strconv.Itoa(i))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	top, bottom := colorOf(seed), colorOf(seed>>24)
	var alpha uint8 = 255
	if req.Background == "transparent" && format == "png" {
		alpha = 0
	}
	for y := range h {
		c := mix(top, bottom, float64(y)/float64(max(h-1, 1)))
		c.A = alpha
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < len(row); x += 4 {
			row[x], row[x+1], row[x+2], row[x+3] = c.R, c.G, c.B, c.A
		}
	}
	ws := words(req.Prompt)
	if len(ws) > 32 {
		ws = ws[:32]
	}
	side := min(w, h)
	for k, word := range ws {
		hw := hash64(word + "\x00" + strconv.Itoa(k) + "\x00" + strconv.Itoa(i))
		cx, cy := int(hw%uint64(w)), int((hw>>16)%uint64(h))
		r := side/16 + int((hw>>32)%uint64(max(side/6, 1)))
		disc(img, cx, cy, r, colorOf(hw>>40))
	}
	var buf bytes.Buffer
	ct := "image/png"
	var err error
	if format == "jpeg" {
		q := 100
		if c := req.OutputCompression; c != nil {
			q = max(*c, 1)
		}
		ct = "image/jpeg"
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: q})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	}
	if err != nil {
		return nil, err
	}
	return &images.Image{Data: buf.Bytes(), ContentType: ct,
		RevisedPrompt: "A pattern of " + strconv.Itoa(len(ws)) + " discs drawn by the gatewaykit demo from: " + req.Prompt}, nil
}

func colorOf(h uint64) color.NRGBA {
	return color.NRGBA{R: uint8(h), G: uint8(h >> 8), B: uint8(h >> 16), A: 255}
}

func mix(a, b color.NRGBA, t float64) color.NRGBA {
	f := func(x, y uint8) uint8 { return uint8(float64(x)*(1-t) + float64(y)*t + 0.5) }
	return color.NRGBA{R: f(a.R, b.R), G: f(a.G, b.G), B: f(a.B, b.B), A: 255}
}

// disc paints an opaque disc of colour c, radius r, centred on (cx, cy).
func disc(img *image.NRGBA, cx, cy, r int, c color.NRGBA) {
	b := img.Bounds().Intersect(image.Rect(cx-r, cy-r, cx+r+1, cy+r+1))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if dx, dy := x-cx, y-cy; dx*dx+dy*dy <= r*r {
				img.SetNRGBA(x, y, c)
			}
		}
	}
}
