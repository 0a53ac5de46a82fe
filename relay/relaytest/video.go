package relaytest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The model names that select a video behaviour. Any other name makes a
// video normally: queued, then in progress at 50%, then completed, the
// content served as bytes (200).
const (
	// ModeVideoFail fails the task with error code "content_policy".
	ModeVideoFail = "video-fail"
	// ModeVideoRedirect answers the content endpoint with a 301 to the
	// fake's own /cdn/ path, as an upstream with object storage does.
	ModeVideoRedirect = "video-redirect"
	// ModeVideoNoThumbnail has no thumbnail: the thumbnail variant is a
	// 404.
	ModeVideoNoThumbnail = "video-no-thumbnail"
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
	// or in progress before it is done; 2 if zero.
	Polls int
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
	if statusMode(w, model) {
		return
	}
	u.mu.Lock()
	u.nextID++
	v := &video{id: "video_up" + strconv.Itoa(u.nextID), model: model, body: body}
	u.videos[v.id] = v
	u.mu.Unlock()
	writeJSON(w, 200, map[string]any{"id": v.id, "object": "video", "model": model, "status": "queued", "progress": 0, "created_at": 1})
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
		writeError(w, 404, "Video not found", "invalid_request_error", "not_found")
		return
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
		out["status"], out["progress"] = "in_progress", 50
	case v.model == ModeVideoFail:
		out["status"], out["progress"] = "failed", 100
		out["error"] = map[string]any{"code": "content_policy", "message": "The prompt was rejected."}
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
		writeError(w, 404, "Video not found", "invalid_request_error", "not_found")
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
