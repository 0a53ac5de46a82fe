package relaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The model names that select a video behaviour. Any other name makes a
// video normally: queued, then in progress with a progress that rises at
// each status request, then completed, the content served as bytes
// (200).
//
// Like the official API, the fake refuses a create request on POST
// /v1/videos with a 400 in the OpenAI error envelope when its seconds is
// not one of [VideoSeconds] or its size not one of [VideoSizes] (param
// "seconds" or "size").
const (
	// ModeVideoFail fails the task with error code "content_policy".
	ModeVideoFail = "video-fail"
	// ModeVideoRedirect answers the content endpoint with a 301 to the
	// fake's own /cdn/ path, as an upstream with object storage does.
	ModeVideoRedirect = "video-redirect"
	// ModeVideoNoThumbnail has no thumbnail: the thumbnail variant is a
	// 404.
	ModeVideoNoThumbnail = "video-no-thumbnail"
	// ModeVideoSizeRequired refuses a create request without a size
	// (400, param "size").
	ModeVideoSizeRequired = "video-size-required"
	// ModeVideoUnknownModel refuses every create request as an upstream
	// that does not know the model does (404 model_not_found).
	ModeVideoUnknownModel = "video-unknown-model"
	// ModeVideoLeak fails the task with a message that names the fake's
	// own task id, internal addresses and a key, as careless upstreams
	// do: none of it may reach a client.
	ModeVideoLeak = "video-leak"
	// ModeVideoScript serves its content as a hostile upstream might:
	// the video as text/html ([ScriptPage]) and the thumbnail as
	// image/svg+xml ([ScriptSVG]), pages whose script would run on the
	// origin that serves them.
	ModeVideoScript = "video-script"
	// ModeVideoRedirectScript answers the content endpoint with a 302 to
	// a javascript: URL.
	ModeVideoRedirectScript = "video-redirect-script"
)

// The content of ModeVideoScript's video and thumbnail, and the URL that
// ModeVideoRedirectScript redirects to.
const (
	ScriptPage        = `<!doctype html><title>video</title><script>window.gatewaykitScriptRan = true</script>`
	ScriptSVG         = `<svg xmlns="http://www.w3.org/2000/svg"><script>window.gatewaykitScriptRan = true</script></svg>`
	ScriptRedirectURL = "javascript:window.gatewaykitScriptRan=true"
)

// VideoSeconds and VideoSizes are the seconds and sizes that the fake
// accepts on POST /v1/videos.
var (
	VideoSeconds = []string{"4", "8", "12"}
	VideoSizes   = []string{"640x360", "1280x720", "720x1280"}
)

// VideoContent is the content of every fake video, and ThumbnailContent
// that of every thumbnail.
const (
	VideoContent     = "\x00\x00\x00\x18ftypmp42 fake video"
	ThumbnailContent = "\x89PNG\r\n\x1a\n fake thumbnail"
)

// VideoOptions shape the fake's video tasks.
type VideoOptions struct {
	// Polls is the number of status requests a task answers as queued
	// or in progress before it is done; 2 if zero. The first answers
	// queued with progress 0; request n of the others answers in_progress
	// with progress (n-1)·100/Polls, rising step by step.
	Polls int
	// PollAfter, when set, is sent as the openai-poll-after-ms header of
	// status replies, as the official API suggests a poll interval.
	PollAfter time.Duration
}

type video struct {
	id, model string
	polls     int
	body      map[string]any
}

// createVideo answers POST /v1/videos and /v1/vendorai/videos.
func (u *Upstream) createVideo(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, 400, "invalid JSON", "invalid_request_error", "")
		return
	}
	model, _ := body["model"].(string)
	if statusMode(w, model) || refuseVideo(w, r, model, body) {
		return
	}
	u.mu.Lock()
	u.nextID++
	v := &video{id: "video_up" + strconv.Itoa(u.nextID), model: model, body: body}
	u.videos[v.id] = v
	u.mu.Unlock()
	writeJSON(w, 200, map[string]any{"id": v.id, "object": "video", "model": model, "status": "queued", "progress": 0, "created_at": 1})
}

// refuseVideo answers the create requests that the fake refuses, and
// reports whether it did.
func refuseVideo(w http.ResponseWriter, r *http.Request, model string, body map[string]any) bool {
	if model == ModeVideoUnknownModel {
		writeError(w, 404, "The model '"+model+"' does not exist or you do not have access to it.", "invalid_request_error", "model_not_found")
		return true
	}
	if r.URL.Path != "/v1/videos" {
		return false
	}
	bad := func(param, message string) bool {
		e := map[string]any{"message": message, "type": "invalid_request_error", "param": param, "code": "invalid_value"}
		writeJSON(w, 400, map[string]any{"error": e})
		return true
	}
	seconds := body["seconds"]
	if f, ok := seconds.(float64); ok {
		seconds = strconv.FormatFloat(f, 'f', -1, 64)
	}
	if s, ok := seconds.(string); seconds != nil && (!ok || !slices.Contains(VideoSeconds, s)) {
		return bad("seconds", fmt.Sprintf("Invalid value: '%v'. Supported values are: '%s'.", body["seconds"], strings.Join(VideoSeconds, "', '")))
	}
	size, hasSize := body["size"].(string)
	if hasSize && !slices.Contains(VideoSizes, size) {
		return bad("size", fmt.Sprintf("Invalid value: '%s'. Supported values are: '%s'.", size, strings.Join(VideoSizes, "', '")))
	}
	if !hasSize && model == ModeVideoSizeRequired {
		return bad("size", "Missing required parameter: 'size'.")
	}
	return false
}

func (u *Upstream) video(id string) *video {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.videos[id]
}

// getVideo answers GET /v1/videos/{id}: queued, in_progress at 50%, then
// completed or failed.
func (u *Upstream) getVideo(w http.ResponseWriter, r *http.Request) {
	v := u.video(r.PathValue("id"))
	if v == nil {
		writeError(w, 404, "Video with id '"+r.PathValue("id")+"' not found.", "invalid_request_error", "not_found")
		return
	}
	if d := u.Video.PollAfter; d > 0 {
		w.Header().Set("Openai-Poll-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
	}
	polls := u.Video.Polls
	if polls <= 0 {
		polls = 2
	}
	u.mu.Lock()
	v.polls++
	n := v.polls
	u.mu.Unlock()
	out := map[string]any{"id": v.id, "object": "video", "model": v.model, "created_at": 1, "seconds": "4", "size": "640x360"}
	switch {
	case n == 1 && polls > 1:
		out["status"], out["progress"] = "queued", 0
	case n < polls:
		out["status"], out["progress"] = "in_progress", (n-1)*100/polls
	case v.model == ModeVideoFail:
		out["status"], out["progress"] = "failed", 100
		out["error"] = map[string]any{"code": "content_policy", "message": "The prompt was rejected."}
	case v.model == ModeVideoLeak:
		out["status"], out["progress"] = "failed", 100
		out["error"] = map[string]any{"code": "worker_error", "message": "Task " + v.id + " failed on gpu-7.cluster.internal (10.1.2.3:8443): GET " + u.URL +
			"/internal/render/" + v.id + " with Authorization: Bearer sk-upstream-secret-123456 refused"}
	default:
		out["status"], out["progress"] = "completed", 100
		out["completed_at"] = 2
		out["expires_at"] = 4102444800
		out["metadata"] = map[string]any{"url": u.URL + "/v1/videos/" + v.id + "/content", "duration": 4.0, "width": 640, "height": 360, "fps": 24}
	}
	writeJSON(w, 200, out)
}

// videoContent answers GET /v1/videos/{id}/content[?variant=thumbnail].
func (u *Upstream) videoContent(w http.ResponseWriter, r *http.Request) {
	v := u.video(r.PathValue("id"))
	if v == nil {
		writeError(w, 404, "Video with id '"+r.PathValue("id")+"' not found.", "invalid_request_error", "not_found")
		return
	}
	thumb := r.URL.Query().Get("variant") == "thumbnail"
	switch {
	case thumb && v.model == ModeVideoNoThumbnail:
		writeError(w, 404, "No thumbnail", "invalid_request_error", "not_found")
	case v.model == ModeVideoRedirect:
		name := v.id + ".mp4"
		if thumb {
			name = v.id + ".png"
		}
		http.Redirect(w, r, u.URL+"/cdn/"+name, http.StatusMovedPermanently)
	case v.model == ModeVideoRedirectScript:
		w.Header().Set("Location", ScriptRedirectURL)
		w.WriteHeader(http.StatusFound)
	case v.model == ModeVideoScript && thumb:
		w.Header().Set("Content-Type", "image/svg+xml")
		io.WriteString(w, ScriptSVG)
	case v.model == ModeVideoScript:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, ScriptPage)
	case thumb:
		w.Header().Set("Content-Type", "image/png")
		io.WriteString(w, ThumbnailContent)
	default:
		w.Header().Set("Content-Type", "video/mp4")
		io.WriteString(w, VideoContent)
	}
}

// VideoBody returns the JSON body of the create request of the fake's
// task id, as the fake decoded it; nil for an unknown id.
func (u *Upstream) VideoBody(id string) map[string]any {
	v := u.video(id)
	if v == nil {
		return nil
	}
	return v.body
}

// cdn serves the content that ModeVideoRedirect redirects to, without
// credentials, as a CDN does.
func cdn(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	switch {
	case strings.HasSuffix(name, ".mp4"):
		w.Header().Set("Content-Type", "video/mp4")
		io.WriteString(w, VideoContent)
	case strings.HasSuffix(name, ".png"):
		w.Header().Set("Content-Type", "image/png")
		io.WriteString(w, ThumbnailContent)
	default:
		http.NotFound(w, r)
	}
}
