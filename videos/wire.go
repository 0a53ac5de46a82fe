package videos

import "encoding/json"

// Video is the wire form of a task: the reply of the status endpoint and
// an item of the list (spec §2.5, §4.6). A queued or running task carries
// id, object, model, status, progress, created_at, seconds and size; a
// completed one adds completed_at, "error": null, metadata (with url) and
// expires_at and remixed_from_video_id when set; a failed one adds
// completed_at and error {message, code}.
type Video struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	Model              string          `json:"model"`
	Status             Status          `json:"status"`
	Progress           int             `json:"progress"`
	CreatedAt          int64           `json:"created_at"`
	CompletedAt        int64           `json:"completed_at,omitempty"`
	ExpiresAt          int64           `json:"expires_at,omitempty"`
	Seconds            string          `json:"seconds,omitempty"`
	Size               string          `json:"size,omitempty"`
	RemixedFromVideoID string          `json:"remixed_from_video_id,omitempty"`
	Error              json.RawMessage `json:"error,omitempty"` // absent, null, or {message, code}
	Metadata           *Metadata       `json:"metadata,omitempty"`
}

// Created is the reply of the create endpoints: a reduced task.
type Created struct {
	ID        string `json:"id"`
	Status    Status `json:"status"`
	Progress  int    `json:"progress"`
	CreatedAt int64  `json:"created_at"`
}

// VideoList is the reply of GET /v1/videos, in the official API's cursor
// page shape. FirstID and LastID are null on an empty page.
type VideoList struct {
	Object  string  `json:"object"`
	Data    []Video `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// Deleted is the reply of DELETE /v1/videos/{task_id}.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

var jsonNull = json.RawMessage("null")

// wireVideo renders t. contentURL is the URL of t's content endpoint,
// used for the metadata URLs of content the gateway serves.
func wireVideo(t *Task, contentURL string) Video {
	v := Video{
		ID:        t.ID,
		Object:    "video",
		Model:     t.Model,
		Status:    t.Status,
		Progress:  t.Progress,
		CreatedAt: t.CreatedAt.Unix(),
		Seconds:   t.Seconds,
		Size:      t.Size,
	}
	switch t.Status {
	case StatusCompleted:
		v.Progress = 100
		v.CompletedAt = t.CompletedAt.Unix()
		if !t.ExpiresAt.IsZero() {
			v.ExpiresAt = t.ExpiresAt.Unix()
		}
		v.RemixedFromVideoID = t.RemixedFromVideoID
		v.Error = jsonNull
		md := t.Metadata
		md.Seed = t.Metadata.Seed
		if md.URL == "" {
			md.URL = contentURL
		}
		if md.ThumbnailURL == "" && t.HasThumbnail {
			md.ThumbnailURL = contentURL + "?variant=thumbnail"
		}
		v.Metadata = &md
	case StatusFailed:
		if !t.CompletedAt.IsZero() {
			v.CompletedAt = t.CompletedAt.Unix()
		}
		e := TaskError{Code: CodeGenerationFailed, Message: "Video generation failed."}
		if t.Error != nil {
			e = *t.Error
		}
		v.Error, _ = json.Marshal(e)
	}
	return v
}
