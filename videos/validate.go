package videos

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

// The modes in the spec's order, for messages.
var allModes = []models.VideoMode{
	models.ModeT2V, models.ModeI2V, models.ModeFirstFrame, models.ModeFirstLastFrame,
	models.ModeRefImage, models.ModeVideoExtend, models.ModeVideoEdit,
}

// modeRule is what a mode of the multimodal path needs: for each role,
// how many assets (min, max; max < 0: no bound), and whether the prompt
// is required.
type modeRule struct {
	roles  map[string][2]int
	prompt bool
}

// modeRules implements the table of spec §4.8. The prompt is required
// where nothing else says what to make (t2v), where the inputs are only
// references (ref_image), and where it is the edit to make (video_edit);
// it is optional where an image or a video already sets the content
// (i2v, first_frame, first_last_frame, video_extend).
var modeRules = map[models.VideoMode]modeRule{
	models.ModeT2V:            {roles: map[string][2]int{}, prompt: true},
	models.ModeI2V:            {roles: map[string][2]int{RoleImage: {1, 1}}},
	models.ModeFirstFrame:     {roles: map[string][2]int{RoleFirstFrame: {1, 1}}},
	models.ModeFirstLastFrame: {roles: map[string][2]int{RoleFirstFrame: {1, 1}, RoleLastFrame: {1, 1}}},
	models.ModeRefImage:       {roles: map[string][2]int{RoleReferenceImages: {1, -1}}, prompt: true},
	models.ModeVideoExtend:    {roles: map[string][2]int{RoleSourceVideo: {1, 1}}},
	models.ModeVideoEdit:      {roles: map[string][2]int{RoleSourceVideo: {1, 1}, RoleReferenceImages: {0, -1}}, prompt: true},
}

var allRoles = []string{RoleImage, RoleFirstFrame, RoleLastFrame, RoleReferenceImages, RoleSourceVideo}

// checkPrompt checks the prompt's length in characters.
func checkPrompt(prompt string, caps *models.VideoCapabilities, modelID string) error {
	limit := caps.PromptLimit()
	if n := utf8.RuneCountInString(prompt); n > limit {
		return apierrors.InvalidRequestf("prompt", "prompt must be at most %d characters, got %d", limit, n)
	}
	return nil
}

// sizeOf checks a requested size against the model and returns the size
// to record.
func sizeOf(size string, caps *models.VideoCapabilities, modelID string) (string, error) {
	if size == "" {
		if caps != nil && caps.SizeRequired {
			return "", apierrors.InvalidRequestf("size", "size is required for model %s (one of %s)", apierrors.Quote(modelID), strings.Join(caps.Sizes, ", "))
		}
		if caps != nil {
			return caps.DefaultSize, nil
		}
		return "", nil
	}
	if !caps.AllowsSize(size) {
		if caps != nil && len(caps.Sizes) > 0 {
			return "", apierrors.InvalidRequestf("size", "size must be one of %s for model %s, got %s", strings.Join(caps.Sizes, ", "), apierrors.Quote(modelID), apierrors.Quote(size))
		}
		return "", apierrors.InvalidRequestf("size", "size must be <width>x<height> in pixels, such as 1280x720, got %s", apierrors.Quote(size))
	}
	return size, nil
}

func secondsList(caps *models.VideoCapabilities) string {
	s := make([]string, len(caps.Seconds))
	for i, n := range caps.Seconds {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func hasSecondsList(caps *models.VideoCapabilities) bool { return caps != nil && len(caps.Seconds) > 0 }

func defaultSeconds(caps *models.VideoCapabilities) string {
	if caps != nil && caps.DefaultSeconds > 0 {
		return strconv.Itoa(caps.DefaultSeconds)
	}
	return ""
}

// secondsOf checks the seconds of POST /v1/videos: a whole positive
// number, from the model's list if it has one.
func secondsOf(s Seconds, caps *models.VideoCapabilities, modelID string) (string, error) {
	if s == "" {
		return defaultSeconds(caps), nil
	}
	n, ok := s.Int()
	switch {
	case !ok && hasSecondsList(caps):
		return "", apierrors.InvalidRequestf("seconds", "seconds must be one of %s for model %s, got %s", secondsList(caps), apierrors.Quote(modelID), apierrors.Quote(string(s)))
	case !ok:
		return "", apierrors.InvalidRequestf("seconds", "seconds must be a whole positive number of seconds, got %s", apierrors.Quote(string(s)))
	case !caps.AllowsSeconds(n):
		return "", apierrors.InvalidRequestf("seconds", "seconds must be one of %s for model %s, got %d", secondsList(caps), apierrors.Quote(modelID), n)
	}
	return strconv.Itoa(n), nil
}

// newCreateTask checks a POST /v1/videos request against its model, and
// fills the task's fields.
func (h *handler) checkCreate(req *CreateRequest, m *models.Model, t *Task) error {
	caps := m.Video
	if req.Prompt == "" {
		return apierrors.InvalidRequest("prompt", "prompt is required")
	}
	if err := checkPrompt(req.Prompt, caps, m.ID); err != nil {
		return err
	}
	var err error
	if t.Size, err = sizeOf(req.Size, caps, m.ID); err != nil {
		return err
	}
	if t.Seconds, err = secondsOf(req.Seconds, caps, m.ID); err != nil {
		return err
	}
	if ref := req.InputReference; ref != nil {
		switch {
		case ref.FileID != "":
			return apierrors.InvalidRequest("input_reference.file_id", "input_reference.file_id is not supported: send input_reference.image_url (a URL or a data URI) or upload the image as the input_reference file")
		case ref.ImageURL == "":
			return apierrors.InvalidRequest("input_reference.image_url", "input_reference needs image_url (a URL or a data URI), or upload the image as the input_reference file")
		}
		if err := checkMediaRef("input_reference.image_url", ref.ImageURL, kindImage, h.cfg.maxImageBytes); err != nil {
			return err
		}
	}
	return nil
}

// checkMultimodal checks a POST /v1/vendorai/videos request against its
// model, and fills the task's fields.
func (h *handler) checkMultimodal(req *MultimodalRequest, m *models.Model, t *Task) error {
	caps := m.Video
	mode := models.VideoMode(req.Mode)
	rule, known := modeRules[mode]
	switch {
	case req.Mode == "":
		return apierrors.InvalidRequestf("mode", "mode is required (one of %s)", modeList(allModes))
	case !known:
		return apierrors.InvalidRequestf("mode", "mode must be one of %s, got %s", modeList(allModes), apierrors.Quote(req.Mode))
	case !caps.AllowsMode(mode):
		return apierrors.InvalidRequestf("mode", "mode %s is not enabled for model %s (enabled: %s)", apierrors.Quote(req.Mode), apierrors.Quote(m.ID), modeList(caps.Modes))
	case rule.prompt && req.Prompt == "":
		return apierrors.InvalidRequestf("prompt", "prompt is required in mode %s", req.Mode)
	}
	if err := checkPrompt(req.Prompt, caps, m.ID); err != nil {
		return err
	}

	counts := map[string]int{}
	for i, a := range req.Assets {
		param := fmt.Sprintf("assets[%d]", i)
		if !slices.Contains(allRoles, a.Role) {
			return apierrors.InvalidRequestf(param+".role", "%s.role must be one of %s, got %s", param, strings.Join(allRoles, ", "), apierrors.Quote(a.Role))
		}
		if _, used := rule.roles[a.Role]; !used && len(rule.roles) == 0 {
			return apierrors.InvalidRequestf(param+".role", "%s: mode %s takes no assets", param, req.Mode)
		} else if !used {
			return apierrors.InvalidRequestf(param+".role", "%s: mode %s takes no %s asset (it takes %s)", param, req.Mode, a.Role, roleList(rule))
		}
		kind := kindImage
		if a.Role == RoleSourceVideo {
			kind = kindVideo
		}
		if err := checkMediaRef(param+".url", a.URL, kind, h.cfg.maxImageBytes); err != nil {
			return err
		}
		counts[a.Role]++
	}
	for _, role := range allRoles {
		want, used := rule.roles[role]
		if !used {
			continue
		}
		n := counts[role]
		switch {
		case n < want[0] && want[1] < 0:
			return apierrors.InvalidRequestf("assets", "mode %s needs at least %d %s asset", req.Mode, want[0], role)
		case n < want[0]:
			return apierrors.InvalidRequestf("assets", "mode %s needs %s %s asset", req.Mode, article(role), role)
		case want[1] >= 0 && n > want[1]:
			return apierrors.InvalidRequestf("assets", "mode %s takes one %s asset, got %d", req.Mode, role, n)
		}
	}

	if req.Resolution != "" && !caps.AllowsResolution(req.Resolution) {
		allowed := []string{models.Resolution720p, models.Resolution1080p}
		if caps != nil && len(caps.Resolutions) > 0 {
			allowed = caps.Resolutions
		}
		return apierrors.InvalidRequestf("resolution", "resolution must be one of %s for model %s, got %s", strings.Join(allowed, ", "), apierrors.Quote(m.ID), apierrors.Quote(req.Resolution))
	}
	aw, ah := 16, 9
	if req.AspectRatio != "" {
		var ok bool
		if aw, ah, ok = parseRatio(req.AspectRatio); !ok {
			return apierrors.InvalidRequestf("aspect_ratio", "aspect_ratio must be <w>:<h> with whole numbers from 1 to 100, such as 16:9, got %s", apierrors.Quote(req.AspectRatio))
		}
	}
	switch {
	case req.Resolution == "" && req.AspectRatio == "" && caps != nil && caps.DefaultSize != "":
		t.Size = caps.DefaultSize
	default:
		res := req.Resolution
		if res == "" {
			res = models.Resolution720p
			if caps != nil && len(caps.Resolutions) > 0 {
				res = caps.Resolutions[0]
			}
		}
		t.Size = sizeFor(res, aw, ah)
	}

	t.Seconds = defaultSeconds(caps)
	if d := req.DurationSec; d != nil {
		switch {
		case *d <= 0 || math.IsNaN(*d) || math.IsInf(*d, 0):
			return apierrors.InvalidRequestf("duration_sec", "duration_sec must be a positive number of seconds, got %s", apierrors.Echo(formatSeconds(*d)))
		case hasSecondsList(caps) && (*d != math.Trunc(*d) || !caps.AllowsSeconds(int(*d))):
			return apierrors.InvalidRequestf("duration_sec", "duration_sec must be one of %s for model %s, got %s", secondsList(caps), apierrors.Quote(m.ID), apierrors.Echo(formatSeconds(*d)))
		}
		t.Seconds = formatSeconds(*d)
	}
	return nil
}

func modeList(modes []models.VideoMode) string {
	s := make([]string, len(modes))
	for i, m := range modes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

func roleList(rule modeRule) string {
	var s []string
	for _, r := range allRoles {
		if _, ok := rule.roles[r]; ok {
			s = append(s, r)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " and ")
}

func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

func parseRatio(s string) (w, h int, ok bool) {
	ws, hs, found := strings.Cut(s, ":")
	if !found {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if err1 != nil || err2 != nil || w < 1 || h < 1 || w > 100 || h > 100 {
		return 0, 0, false
	}
	return w, h, true
}

// sizeFor returns the frame size of a resolution (720p, 1080p: the short
// side) at an aspect ratio, both sides even: 720p 16:9 is 1280x720, 9:16
// 720x1280, 3:2 1080x720.
func sizeFor(res string, aw, ah int) string {
	short := 720
	if res == models.Resolution1080p {
		short = 1080
	}
	even := func(f float64) int { return int(math.Round(f/2)) * 2 }
	if aw >= ah {
		return fmt.Sprintf("%dx%d", even(float64(short)*float64(aw)/float64(ah)), short)
	}
	return fmt.Sprintf("%dx%d", short, even(float64(short)*float64(ah)/float64(aw)))
}
