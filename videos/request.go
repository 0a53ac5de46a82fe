package videos

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// CreateRequest is the body of POST /v1/videos (spec §4.5), sent as JSON
// or as multipart/form-data. Fields it does not model are kept in Extra and
// encoded again with it, so a relaying generator forwards them.
type CreateRequest struct {
	// Model is the video model id; required.
	Model string `json:"model"`
	// Prompt describes the video; required, at most the model's prompt
	// limit in characters (2500 by default).
	Prompt string `json:"prompt"`
	// Size is "<width>x<height>"; required when the model says so.
	Size string `json:"size,omitempty"`
	// Seconds is the duration, sent as a number or a string.
	Seconds Seconds `json:"seconds,omitempty"`
	// InputReference is the reference image, if any.
	InputReference *InputReference `json:"input_reference,omitempty"`

	// Extra holds the members of the JSON object (or the form fields)
	// that the struct does not model.
	Extra map[string]json.RawMessage `json:"-"`
}

var createRequestJSON = jsonext.NewCodec[CreateRequest]()

// UnmarshalJSON decodes r, keeping unknown members in Extra.
func (r *CreateRequest) UnmarshalJSON(b []byte) error { return createRequestJSON.Decode(b, r) }

// MarshalJSON encodes r with the members of Extra.
func (r CreateRequest) MarshalJSON() ([]byte, error) { return createRequestJSON.Encode(&r) }

// InputReference is the reference image of POST /v1/videos: a JSON object
// {"image_url": URL or data URI}, or a file uploaded in the multipart form
// field input_reference, which the handler turns into a data URI after
// checking it. A data URI always holds a PNG, JPEG or WebP image no larger
// than the handler's limit ([WithMaxImageBytes]); [DecodeDataURI] gives
// back its bytes.
type InputReference struct {
	// ImageURL is an http(s) URL, or a base64 data URI.
	ImageURL string `json:"image_url,omitempty"`
	// FileID refers to an uploaded file in OpenAI's files API, which the
	// gateway does not have: a request that sets it is refused.
	FileID string `json:"file_id,omitempty"`

	// Extra holds members the struct does not model.
	Extra map[string]json.RawMessage `json:"-"`
}

var inputReferenceJSON = jsonext.NewCodec[InputReference]()

// UnmarshalJSON decodes r, keeping unknown members in Extra.
func (r *InputReference) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '"' {
		// A bare string is taken as the image URL.
		return json.Unmarshal(t, &r.ImageURL)
	}
	if err := inputReferenceJSON.Decode(b, r); err != nil {
		return inputReferenceTypeError(err)
	}
	return nil
}

// MarshalJSON encodes r with the members of Extra.
func (r InputReference) MarshalJSON() ([]byte, error) { return inputReferenceJSON.Encode(&r) }

func inputReferenceTypeError(err error) error {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field == "" {
		return apierrors.InvalidRequestf("input_reference", "input_reference must be an object {\"image_url\": ...} or a file, got %s", apierrors.Echo(te.Value)).WithCause(err)
	}
	return err
}

// MultimodalRequest is the body of POST /v1/vendorai/videos (spec §4.8).
// The pass-through options (PromptOptimize to HDUpscale) are not checked:
// they are kept for the [Generator]. Fields the struct does not model are
// kept in Extra.
type MultimodalRequest struct {
	// Model is the video model id; required.
	Model string `json:"model"`
	// Mode is one of the seven modes of the spec, enabled for the model.
	Mode string `json:"mode"`
	// Prompt is required in the modes t2v, ref_image and video_edit, and
	// optional in the others (see the package documentation).
	Prompt string `json:"prompt,omitempty"`
	// Assets are the inputs of the mode, by role.
	Assets []Asset `json:"assets,omitempty"`
	// Resolution is 720p or 1080p.
	Resolution string `json:"resolution,omitempty"`
	// DurationSec is the duration in seconds.
	DurationSec *float64 `json:"duration_sec,omitempty"`
	// AspectRatio is "<w>:<h>", such as 16:9.
	AspectRatio string `json:"aspect_ratio,omitempty"`

	PromptOptimize *bool  `json:"prompt_optimize,omitempty"`
	GenTier        string `json:"gen_tier,omitempty"`
	Quality        string `json:"quality,omitempty"`
	AudioMode      string `json:"audio_mode,omitempty"`
	CameraControl  string `json:"camera_control,omitempty"`
	ShotType       string `json:"shot_type,omitempty"`
	HDUpscale      string `json:"hd_upscale,omitempty"`

	// Extra holds members the struct does not model.
	Extra map[string]json.RawMessage `json:"-"`
}

var multimodalRequestJSON = jsonext.NewCodec[MultimodalRequest]()

// UnmarshalJSON decodes r, keeping unknown members in Extra.
func (r *MultimodalRequest) UnmarshalJSON(b []byte) error { return multimodalRequestJSON.Decode(b, r) }

// MarshalJSON encodes r with the members of Extra.
func (r MultimodalRequest) MarshalJSON() ([]byte, error) { return multimodalRequestJSON.Encode(&r) }

// The asset roles of the multimodal path (spec §4.8).
const (
	RoleImage           = "image"
	RoleFirstFrame      = "first_frame"
	RoleLastFrame       = "last_frame"
	RoleReferenceImages = "reference_images"
	RoleSourceVideo     = "source_video"
)

// Asset is one input of the multimodal path: {role, url}. url is an
// http(s) URL or a base64 data URI (checked like an input reference:
// images must be PNG, JPEG or WebP, a source_video a video).
type Asset struct {
	Role string `json:"role"`
	URL  string `json:"url"`

	// Extra holds members the struct does not model.
	Extra map[string]json.RawMessage `json:"-"`
}

var assetJSON = jsonext.NewCodec[Asset]()

// UnmarshalJSON decodes a, keeping unknown members in Extra.
func (a *Asset) UnmarshalJSON(b []byte) error { return assetJSON.Decode(b, a) }

// MarshalJSON encodes a with the members of Extra.
func (a Asset) MarshalJSON() ([]byte, error) { return assetJSON.Encode(&a) }

// Seconds is a duration in seconds as decimal text. It decodes from a JSON
// number or string and encodes as a string, as the spec's task has it.
// The decoder keeps the text as sent (trimmed); the handler checks it.
type Seconds string

// UnmarshalJSON accepts a number (8) or a string ("8").
func (s *Seconds) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0:
		return apierrors.InvalidRequest("seconds", "seconds must be a number or a string")
	case b[0] == '"':
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return apierrors.InvalidRequest("seconds", "seconds must be a number or a string").WithCause(err)
		}
		*s = Seconds(strings.TrimSpace(str))
		return nil
	case string(b) == "null":
		*s = ""
		return nil
	case b[0] == '-' || b[0] >= '0' && b[0] <= '9':
		*s = Seconds(b)
		return nil
	default:
		return apierrors.InvalidRequestf("seconds", "seconds must be a number or a string, got %s", apierrors.Echo(string(b)))
	}
}

// Int returns s as a whole positive number of seconds. "8", "8.0" and
// "8e0" are 8; "4.5", "0", "-4", "" and "abc" are not whole positive
// numbers.
func (s Seconds) Int() (int, bool) {
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil || f <= 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// formatSeconds renders a duration as decimal text without trailing zeros:
// 8 → "8", 4.5 → "4.5".
func formatSeconds(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
