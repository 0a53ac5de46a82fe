package demo

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	_ "image/jpeg" // reference images
	"image/png"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

// The demo video models of [VideoModels].
const (
	// VideoModelGeneral is a model "of the first kind": POST /v1/videos
	// with seconds 4, 8, 12, 16 or 20 and one of four sizes, required.
	VideoModelGeneral = "demo-video"
	// VideoModelMultimodal serves both create paths, every mode of
	// POST /v1/vendorai/videos, both resolutions and any duration.
	VideoModelMultimodal = "demo-video-pro"
)

// FailMarker in a prompt makes the demo generator fail the task, halfway,
// with code generation_failed.
const FailMarker = "#fail"

// Limits of the demo generator, beyond which it fails the task.
const (
	DemoVideoMaxSeconds = 60
	DemoVideoMaxPixels  = 3840 * 2160
)

// VideoModels returns the catalogue entries of the demo video models.
func VideoModels() []models.Model {
	return []models.Model{
		{
			ID:            VideoModelGeneral,
			OwnedBy:       "gatewaykit",
			Created:       1735689600,
			EndpointTypes: []models.EndpointType{models.CompatVideo},
			Description:   "Deterministic demo video model of the first kind: flat-colour H.264 clips.",
			Video: &models.VideoCapabilities{
				Modes:          []models.VideoMode{models.ModeT2V, models.ModeI2V},
				Seconds:        models.FirstKindSeconds(),
				DefaultSeconds: 4,
				Sizes:          []string{"1280x720", "720x1280", "1792x1024", "1024x1792"},
				SizeRequired:   true,
				Resolutions:    []string{models.Resolution720p},
			},
		},
		{
			ID:            VideoModelMultimodal,
			OwnedBy:       "gatewaykit",
			Created:       1735689600,
			EndpointTypes: []models.EndpointType{models.CompatVideo},
			Description:   "Deterministic demo video model for every mode of the multimodal path.",
			Video: &models.VideoCapabilities{
				DefaultSeconds: 4,
				DefaultSize:    "1280x720",
			},
		},
	}
}

// A VideoOption configures [NewVideoGenerator].
type VideoOption func(*videoConfig)

type videoConfig struct {
	duration time.Duration
	steps    int
	fps      int
}

// WithVideoDuration sets how long one generation takes, spread over the
// progress steps. Default 3 seconds; 0 makes the generator finish at once
// (tests).
func WithVideoDuration(d time.Duration) VideoOption {
	return func(c *videoConfig) { c.duration = max(d, 0) }
}

// WithVideoProgressSteps sets how many progress reports a generation
// makes before it finishes. Default 5 (20, 40, 60, 80, 99 percent… see
// [VideoGenerator]); values below 1 mean 1.
func WithVideoProgressSteps(n int) VideoOption {
	return func(c *videoConfig) { c.steps = max(n, 1) }
}

// WithVideoFPS sets the frame rate of the clips. Default 24; clamped to
// 1–120.
func WithVideoFPS(fps int) VideoOption {
	return func(c *videoConfig) { c.fps = min(max(fps, 1), 120) }
}

// VideoGenerator is the demo [videos.Generator]. It is deterministic: the
// same request gives the same bytes. It is safe for concurrent use.
//
// A generation waits the configured duration in equal steps, reporting
// progress step·100/(steps+1) after each, then writes:
//
//   - an MP4 (H.264 Constrained Baseline, yuv420p) of the task's size
//     (1280x720 when it has none) and duration (4 s when none), at the
//     configured frame rate, each second one flat colour derived from
//     the prompt — the first second takes the average colour of the
//     reference image instead, when the request has a PNG or JPEG one as
//     a data URI (or an uploaded file);
//   - a PNG thumbnail of the first frame, at most 640 pixels wide.
//
// The metadata reports the duration, width, height, fps and a seed (an
// FNV hash of the prompt). A prompt containing [FailMarker] fails the
// task halfway with code generation_failed; so do sizes with an odd side
// or over [DemoVideoMaxPixels], and durations over [DemoVideoMaxSeconds].
type VideoGenerator struct{ cfg videoConfig }

var _ videos.Generator = (*VideoGenerator)(nil)

// NewVideoGenerator returns a demo video generator.
func NewVideoGenerator(opts ...VideoOption) *VideoGenerator {
	cfg := videoConfig{duration: 3 * time.Second, steps: 5, fps: 24}
	for _, o := range opts {
		o(&cfg)
	}
	return &VideoGenerator{cfg: cfg}
}

// Generate implements [videos.Generator].
func (g *VideoGenerator) Generate(ctx context.Context, task *videos.Task, progress func(int)) (*videos.Result, error) {
	prompt := task.Prompt()
	plan, err := g.plan(task)
	if err != nil {
		return nil, err
	}
	fail := strings.Contains(prompt, FailMarker)
	steps := g.cfg.steps
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for i := 1; i <= steps; i++ {
		if err := wait(ctx, &timer, g.cfg.duration/time.Duration(steps)); err != nil {
			return nil, err
		}
		progress(i * 100 / (steps + 1))
		if fail && i*2 >= steps {
			return nil, &videos.Failure{
				Code:    videos.CodeGenerationFailed,
				Message: "The demo generator fails every prompt that contains " + FailMarker + ".",
			}
		}
	}
	return plan.render(prompt, referenceColour(task)), nil
}

// referenceColour returns the average colour of the task's first
// reference image (input_reference, or an image, first_frame or
// reference_images asset) when it is a PNG or JPEG data URI.
func referenceColour(task *videos.Task) *color.RGBA {
	var uris []string
	if c := task.Request.Create; c != nil && c.InputReference != nil {
		uris = append(uris, c.InputReference.ImageURL)
	}
	if m := task.Request.Multimodal; m != nil {
		for _, a := range m.Assets {
			if a.Role != videos.RoleSourceVideo {
				uris = append(uris, a.URL)
			}
		}
	}
	for _, u := range uris {
		_, data, err := videos.DecodeDataURI(u)
		if err != nil {
			continue
		}
		img, _, err := image.Decode(bytes.NewReader(data))
		if err != nil {
			continue
		}
		b := img.Bounds()
		if b.Empty() {
			continue
		}
		// Sample a grid of at most 64x64 points.
		stepX, stepY := max(b.Dx()/64, 1), max(b.Dy()/64, 1)
		var r, g, bl, n uint64
		for y := b.Min.Y; y < b.Max.Y; y += stepY {
			for x := b.Min.X; x < b.Max.X; x += stepX {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				r, g, bl, n = r+uint64(cr>>8), g+uint64(cg>>8), bl+uint64(cb>>8), n+1
			}
		}
		return &color.RGBA{R: uint8(r / n), G: uint8(g / n), B: uint8(bl / n), A: 255}
	}
	return nil
}

// videoPlan is what a generation will write.
type videoPlan struct {
	width, height int
	fps           int
	seconds       float64
}

func (g *VideoGenerator) plan(task *videos.Task) (*videoPlan, error) {
	p := &videoPlan{width: 1280, height: 720, fps: g.cfg.fps, seconds: 4}
	if task.Size != "" {
		ws, hs, ok := strings.Cut(task.Size, "x")
		w, err1 := strconv.Atoi(ws)
		h, err2 := strconv.Atoi(hs)
		if !ok || err1 != nil || err2 != nil || w <= 0 || h <= 0 {
			return nil, demoFailure("the demo generator cannot read the size %q", task.Size)
		}
		p.width, p.height = w, h
	}
	if task.Seconds != "" {
		s, err := strconv.ParseFloat(task.Seconds, 64)
		if err != nil || s <= 0 || math.IsInf(s, 0) {
			return nil, demoFailure("the demo generator cannot read the duration %q", task.Seconds)
		}
		p.seconds = s
	}
	switch {
	case p.width%2 != 0 || p.height%2 != 0:
		return nil, demoFailure("the demo generator makes only even sizes, not %dx%d", p.width, p.height)
	case p.width*p.height > DemoVideoMaxPixels || p.width > 8192 || p.height > 8192:
		return nil, demoFailure("the demo generator makes at most %d pixels per frame, not %dx%d", DemoVideoMaxPixels, p.width, p.height)
	case p.seconds > DemoVideoMaxSeconds:
		return nil, demoFailure("the demo generator makes at most %d seconds, not %s", DemoVideoMaxSeconds, task.Seconds)
	}
	return p, nil
}

func demoFailure(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &videos.Failure{Code: videos.CodeGenerationFailed, Message: strings.ToUpper(msg[:1]) + msg[1:] + "."}
}

// render writes the clip and its thumbnail. The first second has the
// colour of the reference image, if any.
func (p *videoPlan) render(prompt string, reference *color.RGBA) *videos.Result {
	frames := max(int(math.Round(p.seconds*float64(p.fps))), 1)
	h := fnv.New64a()
	h.Write([]byte(prompt))
	seed := int64(h.Sum64() >> 1)

	n := (frames + p.fps - 1) / p.fps
	rgb := make([]color.RGBA, n)
	yuv := make([]color.YCbCr, n)
	for i := range n {
		rgb[i] = paletteColour(uint64(seed), i)
		if i == 0 && reference != nil {
			rgb[i] = *reference
		}
		yuv[i] = studioYCbCr(rgb[i].R, rgb[i].G, rgb[i].B)
	}
	clip := writeMP4(mp4Video{width: p.width, height: p.height, fps: p.fps, frames: frames, colours: yuv})

	return &videos.Result{
		Video:     videos.Media{ContentType: "video/mp4", Data: clip},
		Thumbnail: &videos.Media{ContentType: "image/png", Data: thumbnailPNG(p.width, p.height, rgb[0])},
		Metadata: videos.Metadata{
			Duration: float64(frames) / float64(p.fps),
			Width:    p.width,
			Height:   p.height,
			FPS:      p.fps,
			Seed:     &seed,
		},
	}
}

// paletteColour is the colour of second i: hues a golden angle apart,
// starting from the seed.
func paletteColour(seed uint64, i int) color.RGBA {
	hue := math.Mod(float64(seed%360)+float64(i)*137.508, 360)
	return hsv(hue, 0.65, 0.9)
}

func hsv(h, s, v float64) color.RGBA {
	c := v * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := v - c
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	to8 := func(f float64) uint8 { return uint8(math.Round((f + m) * 255)) }
	return color.RGBA{R: to8(r), G: to8(g), B: to8(b), A: 255}
}

// thumbnailPNG draws the first frame, scaled to at most 640 pixels wide.
func thumbnailPNG(w, h int, c color.RGBA) []byte {
	if w > 640 {
		h = max(h*640/w, 1)
		w = 640
	}
	img := image.NewPaletted(image.Rect(0, 0, w, h), color.Palette{c})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic("demo: encoding a PNG in memory: " + err.Error())
	}
	return buf.Bytes()
}
