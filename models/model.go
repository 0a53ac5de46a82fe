package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// EndpointType names a family of endpoints that a model can serve. A
// model's [Model.EndpointTypes] is sent to clients as
// supported_endpoint_types, and [Require] checks it against the type that
// the called endpoint needs (spec §1).
type EndpointType string

// The endpoint types of the spec.
const (
	// Compat is needed by POST /v1/chat/completions and POST /v1/completions.
	Compat EndpointType = "compat"
	// CompatResponse is needed by POST /v1/responses.
	CompatResponse EndpointType = "compat-response"
	// CompatVideo is needed by POST /v1/videos and POST /v1/vendorai/videos.
	CompatVideo EndpointType = "compat-video"
)

// The endpoint types of the other access points of spec §4.4 that the kit
// serves itself. The spec names none; these are gatewaykit's, named as
// gateways of the spec's kind name theirs ("embeddings",
// "image-generation"), and checked by the handlers of packages
// embeddings, moderations, rerank, images and audio. The relay's
// pass-through of these access points checks none by default
// (relay.WithEndpointType).
const (
	// Embeddings is needed by POST /v1/embeddings.
	Embeddings EndpointType = "embeddings"
	// Moderation is needed by POST /v1/moderations.
	Moderation EndpointType = "moderation"
	// Rerank is needed by POST /v1/rerank.
	Rerank EndpointType = "rerank"
	// ImageGeneration is needed by POST /v1/images/generations.
	ImageGeneration EndpointType = "image-generation"
	// AudioSpeech is needed by POST /v1/audio/speech (text to speech).
	AudioSpeech EndpointType = "audio-speech"
	// AudioTranscription is needed by POST /v1/audio/transcriptions and
	// POST /v1/audio/translations (speech to text).
	AudioTranscription EndpointType = "audio-transcription"
)

func (t EndpointType) known() bool {
	switch t {
	case Compat, CompatResponse, CompatVideo,
		Embeddings, Moderation, Rerank, ImageGeneration, AudioSpeech, AudioTranscription:
		return true
	}
	return false
}

// VideoMode is a mode of the multimodal video path (POST /v1/vendorai/videos,
// spec §4.8).
type VideoMode string

// The modes of the multimodal video path.
const (
	ModeT2V            VideoMode = "t2v"              // text to video; no assets
	ModeI2V            VideoMode = "i2v"              // image to video; asset image
	ModeFirstFrame     VideoMode = "first_frame"      // asset first_frame
	ModeFirstLastFrame VideoMode = "first_last_frame" // assets first_frame, last_frame
	ModeRefImage       VideoMode = "ref_image"        // at least one reference_images asset
	ModeVideoExtend    VideoMode = "video_extend"     // asset source_video
	ModeVideoEdit      VideoMode = "video_edit"       // asset source_video; optional reference_images
)

func (m VideoMode) known() bool {
	switch m {
	case ModeT2V, ModeI2V, ModeFirstFrame, ModeFirstLastFrame, ModeRefImage, ModeVideoExtend, ModeVideoEdit:
		return true
	}
	return false
}

// The resolutions of the multimodal video path (spec §8).
const (
	Resolution720p  = "720p"
	Resolution1080p = "1080p"
)

// DefaultPromptLimit is the longest video prompt, in characters (Unicode
// code points), that a model accepts when its [VideoCapabilities] set no
// other limit (spec §4.5 and §8).
const DefaultPromptLimit = 2500

// FirstKindSeconds returns the durations that the spec allows for video
// models "of the first kind": 4, 8, 12, 16 and 20 seconds. Each call
// returns a new slice, for use as [VideoCapabilities.Seconds].
func FirstKindSeconds() []int { return []int{4, 8, 12, 16, 20} }

// Model is one entry of the model catalogue.
//
// Its JSON form is the configuration form, meant to be written by hand (see
// the package documentation); it is not the wire form of GET /v1/models,
// which [NewHandler] derives from it in three formats. Only ID and
// EndpointTypes are required; every other field may be left out.
type Model struct {
	// ID is the model id that clients send as "model".
	ID string `json:"id"`
	// OwnedBy is sent as owned_by in the OpenAI list.
	OwnedBy string `json:"owned_by,omitempty"`
	// Created is the creation time in Unix seconds: created in the OpenAI
	// list, created_at (RFC 3339) in the messages-format list. Zero means
	// unknown and is sent as 0 and 1970-01-01T00:00:00Z, as Anthropic does
	// for an unknown release date.
	Created int64 `json:"created,omitempty"`
	// EndpointTypes lists the endpoint types the model serves, sent as
	// supported_endpoint_types. At least one is required.
	EndpointTypes []EndpointType `json:"supported_endpoint_types"`

	// DisplayName is a human-readable name for the messages-format and
	// Gemini-style lists. Default: the ID.
	DisplayName string `json:"display_name,omitempty"`
	// Description is sent in the Gemini-style list.
	Description string `json:"description,omitempty"`
	// Version is the Gemini-style version field. Default: "1".
	Version string `json:"version,omitempty"`
	// InputTokenLimit and OutputTokenLimit are the model's context window
	// and output cap in tokens, sent as inputTokenLimit/outputTokenLimit
	// (Gemini-style) and max_input_tokens/max_tokens (messages format).
	// Zero means unknown, and the fields are left out.
	InputTokenLimit  int `json:"input_token_limit,omitempty"`
	OutputTokenLimit int `json:"output_token_limit,omitempty"`

	// Reasoning marks a reasoning model: one whose replies carry
	// reasoning_content. The Gemini-style list sends it as "thinking".
	Reasoning bool `json:"reasoning,omitempty"`

	// Video holds the capabilities of a video model (one with
	// [CompatVideo]). Nil means no restriction beyond the defaults of
	// [VideoCapabilities].
	Video *VideoCapabilities `json:"video,omitempty"`

	// Pricing is the model's price, from which each request's cost in US
	// dollars is computed and recorded against its API key (usage rows,
	// budgets). Nil means free: requests are recorded with a cost of 0.
	// It is configuration only, never sent by GET /v1/models.
	Pricing *Pricing `json:"pricing,omitempty"`
}

// Pricing is the price of a model in US dollars. Every field is optional
// (0 is free) and must not be negative:
//
//	"pricing": {"input_per_million": 3, "output_per_million": 15,
//	  "cached_input_per_million": 0.3, "cache_write_per_million": 3.75}
//
// The rates of the parts of the input and output that providers price
// apart (prompt tokens read from or written to the provider's prompt
// cache, reasoning tokens) are optional: unset (nil, absent from the
// JSON) means the input or output rate, and 0 means free.
type Pricing struct {
	// InputPerMillion is the price of one million input (prompt) tokens,
	// those priced apart below excepted.
	InputPerMillion float64 `json:"input_per_million,omitempty"`
	// OutputPerMillion is the price of one million output (completion)
	// tokens, reasoning tokens included unless ReasoningPerMillion is
	// set.
	OutputPerMillion float64 `json:"output_per_million,omitempty"`
	// CachedInputPerMillion is the price of one million input tokens read
	// from the provider's prompt cache (cached_tokens); InputPerMillion
	// when nil.
	CachedInputPerMillion *float64 `json:"cached_input_per_million,omitempty"`
	// CacheWritePerMillion is the price of one million input tokens
	// written to the provider's prompt cache (cache_write_tokens, the
	// messages format's cache_creation_input_tokens); InputPerMillion
	// when nil.
	CacheWritePerMillion *float64 `json:"cache_write_per_million,omitempty"`
	// ReasoningPerMillion is the price of one million reasoning tokens
	// (reasoning_tokens, part of the output); OutputPerMillion when nil.
	ReasoningPerMillion *float64 `json:"reasoning_per_million,omitempty"`
	// PerSecond is the price of one second of generated video, for video
	// models: a task's cost is its seconds times PerSecond.
	PerSecond float64 `json:"per_second,omitempty"`
}

// Cost returns the price of input and output tokens at p, none of them
// priced apart (TokensCost with only Input and Output); 0 for a nil p.
// It is never negative, NaN or infinite: negative counts and prices count
// as 0, and a price too large for a float64 is math.MaxFloat64.
func (p *Pricing) Cost(input, output int64) float64 {
	return p.TokensCost(Tokens{Input: input, Output: output})
}

// Tokens are the tokens of one request, as [Pricing.TokensCost] prices
// them: Cached and CacheWrite are the parts of Input read from and
// written to the provider's prompt cache, Reasoning the part of Output
// spent reasoning.
type Tokens struct {
	Input, Output, Cached, CacheWrite, Reasoning int64
}

// TokensCost returns the price of t at p; 0 for a nil p. The cached
// input tokens are priced at CachedInputPerMillion, the cache writes at
// CacheWritePerMillion and the rest of the input at InputPerMillion; the
// reasoning tokens at ReasoningPerMillion and the rest of the output at
// OutputPerMillion (each unset rate being the input or output rate). Like
// Cost, it is never negative, NaN or infinite: negative counts count as
// 0, and the parts at most their whole (the cached tokens at most the
// input, the cache writes at most the input less the cached tokens, the
// reasoning tokens at most the output).
func (p *Pricing) TokensCost(t Tokens) float64 {
	if p == nil {
		return 0
	}
	in, out := max(t.Input, 0), max(t.Output, 0)
	cached := min(max(t.Cached, 0), in)
	write := min(max(t.CacheWrite, 0), in-cached)
	reasoning := min(max(t.Reasoning, 0), out)
	c := float64(in-cached-write)*price(p.InputPerMillion) +
		float64(cached)*price(rate(p.CachedInputPerMillion, p.InputPerMillion)) +
		float64(write)*price(rate(p.CacheWritePerMillion, p.InputPerMillion)) +
		float64(out-reasoning)*price(p.OutputPerMillion) +
		float64(reasoning)*price(rate(p.ReasoningPerMillion, p.OutputPerMillion))
	return finite(c / 1e6)
}

// rate is *r, or def when r is nil.
func rate(r *float64, def float64) float64 {
	if r == nil {
		return def
	}
	return *r
}

// VideoCost returns the price of seconds of video at p; 0 for a nil p.
// Like Cost, it is never negative, NaN or infinite.
func (p *Pricing) VideoCost(seconds float64) float64 {
	if p == nil || !(seconds > 0) {
		return 0
	}
	return finite(min(seconds, math.MaxFloat64) * price(p.PerSecond))
}

// price is v as a price: 0 if it is negative or not a number.
func price(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	return min(v, math.MaxFloat64)
}

// finite is the cost c, at most math.MaxFloat64 (c is never NaN here:
// its terms are finite or +Inf, and ≥ 0).
func finite(c float64) float64 { return min(c, math.MaxFloat64) }

func (p *Pricing) validate() []error {
	var errs []error
	for _, f := range []struct {
		name string
		v    float64
	}{{"input_per_million", p.InputPerMillion}, {"output_per_million", p.OutputPerMillion}, {"per_second", p.PerSecond},
		{"cached_input_per_million", rate(p.CachedInputPerMillion, 0)}, {"cache_write_per_million", rate(p.CacheWritePerMillion, 0)},
		{"reasoning_per_million", rate(p.ReasoningPerMillion, 0)}} {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("pricing.%s: %v is not a price (want a number ≥ 0)", f.name, f.v))
		}
	}
	return errs
}

// Supports reports whether m lists the endpoint type t.
func (m *Model) Supports(t EndpointType) bool {
	return slices.Contains(m.EndpointTypes, t)
}

// Clone returns a deep copy of m: the copy shares no slice or pointer
// with m.
func (m *Model) Clone() Model {
	c := *m
	c.EndpointTypes = slices.Clone(m.EndpointTypes)
	if m.Video != nil {
		v := m.Video.clone()
		c.Video = &v
	}
	if m.Pricing != nil {
		p := *m.Pricing
		for _, r := range []**float64{&p.CachedInputPerMillion, &p.CacheWritePerMillion, &p.ReasoningPerMillion} {
			if *r != nil {
				v := **r
				*r = &v
			}
		}
		c.Pricing = &p
	}
	return c
}

// VideoCapabilities are the request values a video model accepts, checked by
// the video create handlers. In every list an empty (or absent) list means
// no restriction; a nil *VideoCapabilities behaves as the zero value, and
// all its methods accept a nil receiver.
type VideoCapabilities struct {
	// Modes lists the enabled modes of the multimodal path.
	Modes []VideoMode `json:"modes,omitempty"`
	// Seconds lists the allowed durations in seconds; models of the first
	// kind allow 4, 8, 12, 16 and 20 ([FirstKindSeconds]).
	Seconds []int `json:"seconds,omitempty"`
	// DefaultSeconds is the duration used when a request sends none; zero
	// leaves it to the generator.
	DefaultSeconds int `json:"default_seconds,omitempty"`
	// Sizes lists the allowed sizes as "<width>x<height>", e.g. "1280x720".
	Sizes []string `json:"sizes,omitempty"`
	// SizeRequired makes size a required field of POST /v1/videos.
	SizeRequired bool `json:"size_required,omitempty"`
	// DefaultSize is the size used when a request sends none; empty leaves
	// it to the generator.
	DefaultSize string `json:"default_size,omitempty"`
	// Resolutions lists the allowed resolutions of the multimodal path:
	// [Resolution720p], [Resolution1080p].
	Resolutions []string `json:"resolutions,omitempty"`
	// MaxPromptChars is the longest prompt in characters (Unicode code
	// points). Zero means [DefaultPromptLimit].
	MaxPromptChars int `json:"max_prompt_chars,omitempty"`
}

func (v *VideoCapabilities) clone() VideoCapabilities {
	c := *v
	c.Modes = slices.Clone(v.Modes)
	c.Seconds = slices.Clone(v.Seconds)
	c.Sizes = slices.Clone(v.Sizes)
	c.Resolutions = slices.Clone(v.Resolutions)
	return c
}

// AllowsMode reports whether mode is enabled: Modes is empty or lists it.
func (v *VideoCapabilities) AllowsMode(mode VideoMode) bool {
	return v == nil || len(v.Modes) == 0 || slices.Contains(v.Modes, mode)
}

// AllowsSeconds reports whether a duration of s seconds is allowed: s is
// positive, and Seconds is empty or lists it.
func (v *VideoCapabilities) AllowsSeconds(s int) bool {
	if s <= 0 {
		return false
	}
	return v == nil || len(v.Seconds) == 0 || slices.Contains(v.Seconds, s)
}

// AllowsSize reports whether size is allowed: it has the form
// "<width>x<height>" with positive integers, and Sizes is empty or lists it.
func (v *VideoCapabilities) AllowsSize(size string) bool {
	if _, _, ok := parseSize(size); !ok {
		return false
	}
	return v == nil || len(v.Sizes) == 0 || slices.Contains(v.Sizes, size)
}

// AllowsResolution reports whether res is allowed: it is 720p or 1080p,
// and Resolutions is empty or lists it.
func (v *VideoCapabilities) AllowsResolution(res string) bool {
	if res != Resolution720p && res != Resolution1080p {
		return false
	}
	return v == nil || len(v.Resolutions) == 0 || slices.Contains(v.Resolutions, res)
}

// PromptLimit returns the longest allowed prompt in characters (Unicode
// code points, as counted by utf8.RuneCountInString): MaxPromptChars, or
// [DefaultPromptLimit] when that is zero.
func (v *VideoCapabilities) PromptLimit() int {
	if v == nil || v.MaxPromptChars <= 0 {
		return DefaultPromptLimit
	}
	return v.MaxPromptChars
}

// parseSize splits "<width>x<height>" into positive integers.
func parseSize(s string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(s, "x")
	if !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 || ws[0] == '+' || hs[0] == '+' {
		return 0, 0, false
	}
	return w, h, true
}

// Validate reports every problem of m as a configuration: an empty or
// padded id, no endpoint type, an unknown endpoint type, video mode or
// resolution, a malformed size, a default outside its list, negative
// numbers, or video capabilities on a model without [CompatVideo]. The
// errors are joined with errors.Join and name the offending field by its
// JSON name.
func (m *Model) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	switch {
	case m.ID == "":
		bad("id", "is required")
	case strings.TrimSpace(m.ID) != m.ID:
		bad("id", "has leading or trailing spaces")
	}
	if m.Created < 0 {
		bad("created", "is negative")
	}
	if len(m.EndpointTypes) == 0 {
		bad("supported_endpoint_types", "at least one of %q, %q, %q is required", Compat, CompatResponse, CompatVideo)
	}
	for i, t := range m.EndpointTypes {
		field := fmt.Sprintf("supported_endpoint_types[%d]", i)
		switch {
		case !t.known():
			bad(field, "unknown endpoint type %q (want %q, %q, %q, %q, %q, %q, %q, %q or %q)", t,
				Compat, CompatResponse, CompatVideo, Embeddings, Moderation, Rerank, ImageGeneration, AudioSpeech, AudioTranscription)
		case slices.Index(m.EndpointTypes, t) < i:
			bad(field, "duplicate %q", t)
		}
	}
	if m.InputTokenLimit < 0 {
		bad("input_token_limit", "is negative")
	}
	if m.OutputTokenLimit < 0 {
		bad("output_token_limit", "is negative")
	}
	if v := m.Video; v != nil {
		if !m.Supports(CompatVideo) {
			bad("video", "is set but supported_endpoint_types lacks %q", CompatVideo)
		}
		errs = append(errs, v.validate()...)
	}
	if m.Pricing != nil {
		errs = append(errs, m.Pricing.validate()...)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("model %q: %w", m.ID, errors.Join(errs...))
}

func (v *VideoCapabilities) validate() []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("video.%s: %s", field, fmt.Sprintf(format, args...)))
	}
	for i, m := range v.Modes {
		field := fmt.Sprintf("modes[%d]", i)
		switch {
		case !m.known():
			bad(field, "unknown mode %q", m)
		case slices.Index(v.Modes, m) < i:
			bad(field, "duplicate %q", m)
		}
	}
	for i, s := range v.Seconds {
		field := fmt.Sprintf("seconds[%d]", i)
		switch {
		case s <= 0:
			bad(field, "%d is not positive", s)
		case slices.Index(v.Seconds, s) < i:
			bad(field, "duplicate %d", s)
		}
	}
	switch {
	case v.DefaultSeconds < 0:
		bad("default_seconds", "is negative")
	case v.DefaultSeconds > 0 && !v.AllowsSeconds(v.DefaultSeconds):
		bad("default_seconds", "%d is not in seconds", v.DefaultSeconds)
	}
	for i, s := range v.Sizes {
		field := fmt.Sprintf("sizes[%d]", i)
		switch {
		case !sizeWellFormed(s):
			bad(field, "%q is not <width>x<height>", s)
		case slices.Index(v.Sizes, s) < i:
			bad(field, "duplicate %q", s)
		}
	}
	if v.DefaultSize != "" && !v.AllowsSize(v.DefaultSize) {
		bad("default_size", "%q is not <width>x<height> or not in sizes", v.DefaultSize)
	}
	for i, r := range v.Resolutions {
		field := fmt.Sprintf("resolutions[%d]", i)
		switch {
		case r != Resolution720p && r != Resolution1080p:
			bad(field, "unknown resolution %q (want %q or %q)", r, Resolution720p, Resolution1080p)
		case slices.Index(v.Resolutions, r) < i:
			bad(field, "duplicate %q", r)
		}
	}
	if v.MaxPromptChars < 0 {
		bad("max_prompt_chars", "is negative")
	}
	return errs
}

func sizeWellFormed(s string) bool {
	_, _, ok := parseSize(s)
	return ok
}

// ValidateModels validates each model with [Model.Validate] and checks that
// no id appears twice. It reports every problem, joined with errors.Join,
// each prefixed with the model's index in list.
func ValidateModels(list []Model) error {
	var errs []error
	seen := make(map[string]int, len(list))
	for i := range list {
		m := &list[i]
		if err := m.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("models[%d]: %w", i, err))
		}
		if m.ID == "" {
			continue
		}
		if j, dup := seen[m.ID]; dup {
			errs = append(errs, fmt.Errorf("models[%d]: id %q already used by models[%d]", i, m.ID, j))
			continue
		}
		seen[m.ID] = i
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("models: invalid model list: %w", errors.Join(errs...))
}

// ParseModels decodes a JSON array of models in the configuration form
// (see the package documentation) and validates it with [ValidateModels].
// Decoding is strict: an unknown field, a value of the wrong type, or data
// after the array is an error, so that a typo in a hand-written file does
// not pass silently.
func ParseModels(data []byte) ([]Model, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var list []Model
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("models: decode model list: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("models: decode model list: data after the array")
	}
	if list == nil {
		return nil, errors.New("models: decode model list: want a JSON array, got null")
	}
	if err := ValidateModels(list); err != nil {
		return nil, err
	}
	return list, nil
}
