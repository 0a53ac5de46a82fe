package videos

import (
	"crypto/rand"
	"strings"
	"time"
)

// Status is the state of a video task (spec §3.1). The status endpoint
// only ever sends these four values: the official SDKs' pollers treat
// anything else as an error.
type Status string

// The states of a task: queued → in_progress → completed or failed.
const (
	StatusQueued     Status = "queued"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
)

// Terminal reports whether s is completed or failed: a final state that
// no update leaves.
func (s Status) Terminal() bool { return s == StatusCompleted || s == StatusFailed }

// CodeGenerationFailed is the error code of a failed task when the
// [Generator] names no other ([Failure]).
const CodeGenerationFailed = "generation_failed"

// IDPrefix starts every task id.
const IDPrefix = "task_"

// NewID returns a new task id: [IDPrefix] followed by 26 base32
// characters (130 random bits from crypto/rand).
func NewID() string { return IDPrefix + rand.Text() }

// ValidID reports whether id has the form of an id made by [NewID]: the
// prefix followed by 1 to 128 characters from [A-Za-z0-9_-]. Ids of other
// forms can be neither files nor URL path segments safely, so the content
// stores and handlers treat them as unknown.
func ValidID(id string) bool {
	rest, ok := strings.CutPrefix(id, IDPrefix)
	if !ok || rest == "" || len(rest) > 128 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Task is a video generation task as a [TaskStore] holds it: every field
// of the spec's video task (§2.5), its owner, the original request and the
// state of the worker that runs it. The JSON tags give a persistent store
// a ready encoding; the wire form of the status endpoint is built from a
// Task by the handler, not by encoding it.
type Task struct {
	// ID is the task id, "task_" followed by at least 128 random bits
	// ([NewID]).
	ID string `json:"id"`
	// Owner scopes the task: only requests whose owner (see [WithOwner])
	// equals Owner see it. Never sent to clients.
	Owner string `json:"owner"`
	// Model is the model id of the request.
	Model string `json:"model"`
	// Status is the task's state; see [Status].
	Status Status `json:"status"`
	// Progress is 0 to 100 and never decreases; 100 once completed.
	Progress int `json:"progress"`
	// CreatedAt is when the task was created; sent in Unix seconds.
	CreatedAt time.Time `json:"created_at"`
	// CompletedAt is when the task completed or failed; zero while it
	// runs. Sent in Unix seconds, and omitted while zero.
	CompletedAt time.Time `json:"completed_at,omitzero"`
	// ExpiresAt is when the result expires, if the generator says so;
	// zero means never or unknown, and is not sent.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Seconds is the duration in seconds as decimal text ("8"), from the
	// request or the model's default, or set from the result when both
	// were silent.
	Seconds string `json:"seconds,omitempty"`
	// Size is "<width>x<height>", from the request (or the resolution and
	// aspect ratio of the multimodal path) or the model's default, or set
	// from the result when both were silent.
	Size string `json:"size,omitempty"`
	// RemixedFromVideoID is sent as remixed_from_video_id when the
	// generator sets it (some channels put their CDN address there).
	RemixedFromVideoID string `json:"remixed_from_video_id,omitempty"`
	// Error is set when the task failed.
	Error *TaskError `json:"error,omitempty"`
	// Metadata is the extension data of a completed task.
	Metadata Metadata `json:"metadata,omitzero"`
	// HasThumbnail reports that a thumbnail is available, in the
	// [ContentStore] or at Metadata.ThumbnailURL.
	HasThumbnail bool `json:"has_thumbnail,omitempty"`

	// BackendRef is the reference that a [Submitter] returned for the
	// work it started when the task was created (an upstream's task id),
	// for the [Generator] to find that work again; empty when nothing was
	// submitted. It is opaque to the store and never sent to clients.
	BackendRef string `json:"backend_ref,omitempty"`
	// Charge is the quota reserved for the task when it was created
	// (see [WithPricing]): the runner (package videos/runner) settles it when the task
	// completes and releases it when the task fails, and the handler
	// releases it when the task is deleted before it finishes. Nil when
	// nothing was reserved (a free model, or no key to charge). Never
	// sent to clients.
	Charge *TaskCharge `json:"charge,omitempty"`

	// Request is the request that created the task. It is immutable:
	// stores may share it between the copies they hand out, and callers
	// must not modify it.
	Request Request `json:"request"`

	// Attempts counts the claims of the task by workers; the current
	// holder of the lease is the worker whose claim made it this number.
	Attempts int `json:"attempts,omitempty"`
	// Worker names the worker holding the lease, or is empty when none
	// does (never claimed, finished, or released).
	Worker string `json:"worker,omitempty"`
	// LeaseExpiresAt is when the current lease runs out; see [TaskStore]
	// for what happens then.
	LeaseExpiresAt time.Time `json:"lease_expires_at,omitzero"`
}

// Clone returns a copy of t that shares nothing mutable with it except the
// immutable Request.
func (t *Task) Clone() *Task {
	c := *t
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	if t.Charge != nil {
		ch := *t.Charge
		c.Charge = &ch
	}
	if t.Metadata.Seed != nil {
		s := *t.Metadata.Seed
		c.Metadata.Seed = &s
	}
	return &c
}

// Prompt returns the prompt of the task's request, on either path.
func (t *Task) Prompt() string { return t.Request.Prompt() }

// TaskCharge is the quota reserved for a task ([Task.Charge]).
type TaskCharge struct {
	// KeyID is the id of the API key charged (auth.Principal.KeyID).
	KeyID string `json:"key_id"`
	// Amount is what was reserved, in the unit of the key's quota.
	Amount int64 `json:"amount"`
	// CostUSD is the task's price in US dollars at its model's pricing
	// (models.Pricing.PerSecond times its seconds, rounded up), recorded
	// against the key when the task completes.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// TaskError is the error of a failed task, sent as {"message","code"}.
type TaskError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Metadata is the extension data of a completed task (spec §2.5). Every
// field is optional; zero values are not sent.
type Metadata struct {
	// URL is where the video lives when it is not in the gateway's
	// [ContentStore] (a CDN, an upstream's object storage). When empty,
	// the status endpoint sends the URL of the content endpoint instead.
	URL string `json:"url,omitempty"`
	// ThumbnailURL is the same for the thumbnail.
	ThumbnailURL string `json:"thumbnail_url,omitempty"`
	// Duration is the actual duration in seconds.
	Duration float64 `json:"duration,omitempty"`
	// Width and Height are in pixels.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// FPS is the frame rate.
	FPS int `json:"fps,omitempty"`
	// Seed is the random seed, when the generator reports one.
	Seed *int64 `json:"seed,omitempty"`
}

// Endpoint names the create path a request came through.
type Endpoint string

// The create paths.
const (
	// EndpointVideos is POST /v1/videos (spec §4.5).
	EndpointVideos Endpoint = "videos"
	// EndpointMultimodal is POST /v1/vendorai/videos (spec §4.8).
	EndpointMultimodal Endpoint = "vendorai"
)

// Request is the original request of a task: exactly one of Create and
// Multimodal is set.
type Request struct {
	// Create is the request of POST /v1/videos.
	Create *CreateRequest `json:"create,omitempty"`
	// Multimodal is the request of POST /v1/vendorai/videos.
	Multimodal *MultimodalRequest `json:"multimodal,omitempty"`
}

// Endpoint returns the path the request came through.
func (r Request) Endpoint() Endpoint {
	if r.Multimodal != nil {
		return EndpointMultimodal
	}
	return EndpointVideos
}

// Prompt returns the request's prompt, on either path.
func (r Request) Prompt() string {
	switch {
	case r.Create != nil:
		return r.Create.Prompt
	case r.Multimodal != nil:
		return r.Multimodal.Prompt
	}
	return ""
}
