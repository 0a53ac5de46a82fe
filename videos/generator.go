package videos

import (
	"context"
	"time"
)

// A Generator makes videos: it is the video backend that the runner (package videos/runner)
// calls for each task it claims. Implementations must be safe for
// concurrent use: a runner calls Generate from several goroutines.
//
// Generate makes the video of task (a copy the generator may keep) and
// reports progress, 0 to 100, through progress as it goes; the runner
// saves it (progress never goes down; values outside 0–100 are clamped).
// It must return when ctx is done: the runner cancels ctx at shutdown,
// when the task is deleted, when another worker has taken the task over,
// and after the generation timeout.
//
// A returned error fails the task. Its code and message are those of a
// [*Failure] in the error's chain; the code of any other error is
// generation_failed and its message a generic one ("Video generation
// failed."), the error itself going to the log only, because error texts
// may hold internal details. An *apierrors.Error's message is sent as it
// is.
type Generator interface {
	Generate(ctx context.Context, task *Task, progress func(percent int)) (*Result, error)
}

// A Submitter starts a task's work before the client is answered: it is
// the optional capability of a [Generator] whose work runs elsewhere (an
// upstream service), so that a request the other side refuses is refused
// to the client at once, instead of becoming a task that fails later.
// Find it at run time with a type assertion (as net/http finds
// http.Flusher) and pass it to the handler with [WithSubmitter].
//
// The create handlers call Submit with the validated task, ID, Owner,
// Model, Seconds, Size and Request set, before storing it. Submit starts
// the work and returns a reference to it (an upstream's task id and where
// it lives), which the handler stores as the task's [Task.BackendRef];
// Generate then finds the work by that reference instead of starting it
// again, whichever runner, process or replica claims the task, after a
// restart too. An empty ref with a nil error means nothing was started:
// Generate does all the work, as for a plain Generator.
//
// An error refuses the creation: an *apierrors.Error is sent to the client
// in the flat shape of the create paths (its status kept for 429 and 5xx,
// 400 for other client errors), so its message must be fit for clients;
// any other error is a 500 whose text is only logged. Implementations
// must be safe for concurrent use and return when ctx (the client's
// request) is done.
type Submitter interface {
	Submit(ctx context.Context, task *Task) (ref string, err error)
}

// GeneratorFunc adapts a function to [Generator].
type GeneratorFunc func(ctx context.Context, task *Task, progress func(percent int)) (*Result, error)

// Generate calls f.
func (f GeneratorFunc) Generate(ctx context.Context, task *Task, progress func(percent int)) (*Result, error) {
	return f(ctx, task, progress)
}

// Result is a finished video.
type Result struct {
	// Video is the video; required.
	Video Media
	// Thumbnail is the thumbnail, if any (image/png or image/jpeg).
	Thumbnail *Media
	// Metadata is sent as the task's metadata. Its URL and ThumbnailURL
	// are ignored: they come from Video.URL and Thumbnail.URL. When the
	// task has no seconds or size yet, Duration and Width×Height give
	// them.
	Metadata Metadata
	// ExpiresAt is when the result expires, if it does.
	ExpiresAt time.Time
	// RemixedFromVideoID is sent as remixed_from_video_id when set.
	RemixedFromVideoID string
}

// Media is a video or thumbnail: its bytes, which the runner puts in the
// [ContentStore], or the URL where it already lives (an upstream's CDN),
// which the task records and the content endpoint redirects to (or
// streams, see [WithContentProxy]).
type Media struct {
	// ContentType is its media type, such as video/mp4 or image/png.
	ContentType string
	// Data holds the bytes; empty when URL is set.
	Data []byte
	// URL is where it lives when Data is empty.
	URL string
}

// Failure is a generation failure with the code and message that the
// failed task shows. Return one (or wrap one) from [Generator.Generate].
type Failure struct {
	// Code is the error code; empty means generation_failed.
	Code string
	// Message is sent to clients as error.message.
	Message string
	// Err is the cause, logged and never sent.
	Err error
}

// Error implements error; it includes the cause, so it is for logs.
func (f *Failure) Error() string {
	s := "videos: generation failed: " + f.code() + ": " + f.Message
	if f.Err != nil {
		s += ": " + f.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Err }

func (f *Failure) code() string {
	if f.Code == "" {
		return CodeGenerationFailed
	}
	return f.Code
}
