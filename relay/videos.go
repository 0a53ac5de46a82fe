package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/mediareply"
	"github.com/gatewaykit/gatewaykit/videos"
)

// maxPollFailures is how many status requests in a row may fail (an
// unreachable upstream, a 5xx, a timeout) before a video task is given up.
const maxPollFailures = 5

// Videos returns the relay's video backend: a videos.Generator for the
// videos runner that is also a videos.Submitter, so that tasks are
// created upstream before the client is answered. Give it to the video
// handler with videos.WithSubmitter (gateway.New does so):
//
//	gen := r.Videos()
//	rn := runner.New(store, gen, contents, runner.WithKeyStore(keys))
//	go rn.Run(ctx)
//	h := videos.NewHandler(store, catalog, contents,
//		videos.WithNotify(rn.Wake), videos.WithSubmitter(gen.(videos.Submitter)))
//
// For each gateway task it:
//
//  1. creates the task upstream, in Submit, while the client waits: POST
//     {base}/videos with the task's request as JSON (every field of it,
//     unmodelled ones included; a multipart upload's input_reference as
//     its data URI), or POST {base}/vendorai/videos for a task of the
//     multimodal path, with "model" replaced by the upstream's name. The
//     create request fails over between the model's upstreams like any
//     other, and carries "Idempotency-Key: <gateway task id>", so that an
//     upstream that honours it creates one task even when the request is
//     retried. A refusal is the creation's error, sent to the client at
//     once in the flat shape of the create paths, and no task is stored:
//     an upstream 4xx keeps its message and code (an upstream 400 is the
//     client's 400), a 429 its Retry-After, and a 5xx, an unreachable
//     upstream or an unreadable reply is a 502 bad_gateway (504 on a
//     timeout). Submit returns the upstream and its task id as the
//     reference that the handler stores with the task (Task.BackendRef);
//  2. polls GET {base}/videos/{upstream id}, in Generate, on the upstream
//     that holds the task (by its [Upstream.Name]: keep the names of a
//     route's upstreams distinct and stable across restarts), whichever
//     runner, process or replica claims the task: a task is never created
//     upstream twice. It polls within a second of the creation (and at
//     once when it takes over a task), then every poll interval
//     ([WithPollInterval], default 5s), or sooner when the upstream's
//     openai-poll-after-ms header asks for it (but not more often than
//     every 100ms, unless the poll interval is shorter), and reports the upstream's progress (a number or
//     decimal text, clamped to 0–100) as it rises. Up to 5 failed polls
//     in a row (unreachable, 5xx, timeouts, 429s, which also wait their
//     Retry-After) are tolerated;
//  3. when the upstream task completes, fetches GET
//     {base}/videos/{upstream id}/content, and the same with
//     ?variant=thumbnail. Content answered with bytes is downloaded (up
//     to [WithMaxMediaBytes]) and stored by the gateway, with the type
//     the upstream declared if it is a video or image type that a
//     browser does not run (video/mp4, video/webm, video/quicktime,
//     image/png, image/jpeg, image/webp, image/gif), else the type its
//     bytes sniff as if that is one, else application/octet-stream: an
//     upstream's text/html or image/svg+xml is never served as such on
//     the gateway's origin (the content endpoint offers anything but
//     video/mp4, video/webm, image/png, image/jpeg and image/webp for
//     download only; see package videos, Content).
//     Content answered with a redirect (301, 302, 303, 307 or 308, as an
//     upstream with object storage does) is not followed: its Location
//     is handed back as the result's URL, so the video is not copied
//     through the gateway, if it is an https URL, or an http one from an
//     upstream whose BaseURL is http (no less safe than the upstream it
//     came from); any other location (javascript:, data:, file:, an http
//     URL from an https upstream) fails the task with bad_gateway. The
//     gateway's content endpoint then redirects its client there, or
//     streams it with videos.WithContentProxy, which the official Go
//     SDK needs (it refuses cross-origin redirects). A missing thumbnail
//     (404, or any failure to fetch it) leaves the task without one.
//
// A task stored without a reference (a handler without WithSubmitter)
// is created upstream by Generate instead, when a runner claims it; a
// refusal then fails the task rather than the creation.
//
// The gateway's task ids stay its own: the upstream's id is logged with
// the gateway's when the task is created upstream, and kept in the
// task's BackendRef, which clients never see. A task that fails upstream
// fails with the upstream's error code and message; other failures with
// the codes bad_gateway or gateway_timeout. Every video error a client
// sees is cleaned first: the upstream's task id is replaced by the
// gateway's, and URLs, IP addresses, internal host names (the upstream's
// own, and names under .internal, .local, .svc, .corp and the like) and
// credentials (sk-… keys, Bearer tokens, key=… values) are replaced by
// "[redacted]". An upstream 401 or 403 means that the upstream refused
// the gateway's own key, not the client's: it is a 502 bad_gateway whose
// message says that the upstream refused the gateway's credentials; the
// upstream's reply, without credentials, is the error's cause, which
// goes to the log only.
//
// Each task holds one of the runner's workers while it is polled, which
// costs a goroutine and one request per poll: give a relay's runner
// enough workers (runner.WithWorkers) for the tasks it runs at once, or
// tasks wait queued, at progress 0, while their upstream tasks run.
func (r *Relay) Videos() videos.Generator { return videoBackend{r} }

type videoBackend struct{ r *Relay }

// upstreamVideo is the part of an upstream's video task that the relay
// reads.
type upstreamVideo struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	// RawProgress is the progress as sent: a number, or text.
	RawProgress any    `json:"progress"`
	Seconds     any    `json:"seconds"`
	Size        string `json:"size"`
	Error       *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ExpiresAt          int64  `json:"expires_at"`
	RemixedFromVideoID string `json:"remixed_from_video_id"`
	Metadata           *struct {
		Duration float64 `json:"duration"`
		Width    int     `json:"width"`
		Height   int     `json:"height"`
		FPS      int     `json:"fps"`
		Seed     *int64  `json:"seed"`
	} `json:"metadata"`

	// Progress is RawProgress read, clamped to 0–100; nil if absent or
	// unreadable.
	Progress *int `json:"-"`
	// pollAfter is the upstream's openai-poll-after-ms hint.
	pollAfter time.Duration
}

var _ videos.Submitter = videoBackend{}

// firstPoll bounds the waits before the first two status requests of a
// task after its creation (one after a takeover), so that its progress
// shows early even with a long poll interval.
const firstPoll = time.Second

// minPollHint is the shortest poll interval that an upstream's
// openai-poll-after-ms hint may set.
const minPollHint = 100 * time.Millisecond

// videoRef is the reference of an upstream task, stored as the gateway
// task's BackendRef: the upstream (by name, within the task's route) and
// its task id.
type videoRef struct {
	Upstream string `json:"upstream"`
	ID       string `json:"id"`
}

// Submit creates the task upstream (step 1 of [Relay.Videos]) and returns
// its reference, which the gateway stores with the task.
func (b videoBackend) Submit(ctx context.Context, task *videos.Task) (string, error) {
	v, u, err := b.create(ctx, task)
	if err != nil {
		return "", err
	}
	b.r.logger.LogAttrs(ctx, slog.LevelInfo, "relay: video task created upstream",
		slog.String("task", task.ID), slog.String("upstream", u.Name), slog.String("upstream_task", v.ID))
	ref, err := json.Marshal(videoRef{Upstream: u.Name, ID: v.ID})
	if err != nil {
		return "", apierrors.Internal(err)
	}
	return string(ref), nil
}

func (b videoBackend) Generate(ctx context.Context, task *videos.Task, progress func(percent int)) (*videos.Result, error) {
	if task.BackendRef != "" {
		u, id, err := b.lookup(task)
		if err != nil {
			return nil, err
		}
		return b.follow(ctx, task, u, id, nil, progress)
	}
	// Not submitted at creation (a handler without WithSubmitter): create
	// it now.
	v, u, err := b.create(ctx, task)
	if err != nil {
		return nil, failure(err)
	}
	b.r.logger.LogAttrs(ctx, slog.LevelInfo, "relay: video task created upstream",
		slog.String("task", task.ID), slog.String("upstream", u.Name), slog.String("upstream_task", v.ID))
	return b.follow(ctx, task, u, v.ID, v, progress)
}

// lookup finds the upstream and the upstream task id of a submitted task.
func (b videoBackend) lookup(task *videos.Task) (*Upstream, string, error) {
	var ref videoRef
	if err := json.Unmarshal([]byte(task.BackendRef), &ref); err != nil || ref.ID == "" {
		return nil, "", &videos.Failure{Code: string(apierrors.CodeBadGateway), Message: "The video task's upstream reference could not be read.",
			Err: fmt.Errorf("relay: task %s: bad BackendRef %q: %v", task.ID, task.BackendRef, err)}
	}
	ups := b.r.routes[task.Model]
	for i := range ups {
		if ups[i].Name == ref.Upstream {
			return &ups[i], ref.ID, nil
		}
	}
	return nil, "", &videos.Failure{Code: string(apierrors.CodeBadGateway), Message: "The upstream that holds this video task is no longer configured.",
		Err: fmt.Errorf("relay: task %s: model %q has no upstream named %q (upstream task %s)", task.ID, task.Model, ref.Upstream, ref.ID)}
}

// follow polls the upstream task id on u until it is done, reporting its
// progress, and fetches its content (steps 2 and 3 of [Relay.Videos]).
// v is the task as the create request answered it, or nil: then the
// task is polled at once.
func (b videoBackend) follow(ctx context.Context, task *videos.Task, u *Upstream, id string, v *upstreamVideo, progress func(int)) (*videos.Result, error) {
	scrub := newVideoScrub(u, id, task.ID)
	path := "/videos/" + url.PathEscape(id)
	timer := time.NewTimer(0)
	defer timer.Stop()
	wait := min(b.r.poll, firstPoll)
	if v == nil {
		wait = 0
	}
	failures, polls := 0, 0
	for {
		if v != nil {
			if v.Progress != nil {
				progress(*v.Progress)
			}
			switch v.Status {
			case "completed", "succeeded":
				return b.result(ctx, u, path, v, scrub)
			case "failed", "cancelled", "canceled", "expired":
				return nil, upstreamFailure(v, scrub)
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timer.C:
		}
		next, err := b.poll(ctx, u, path, scrub)
		polls++
		wait = b.r.poll
		if polls == 1 {
			wait = min(wait, firstPoll)
		}
		switch {
		case err == nil:
			v, failures = next, 0
			if h := v.pollAfter; h > 0 && h < wait {
				// The upstream says its status may be asked for sooner.
				wait = max(h, min(minPollHint, wait))
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case retriable(err) && failures+1 < maxPollFailures:
			failures++
			if d := retryAfterOf(err); d > wait {
				wait = d
			}
			b.r.logger.LogAttrs(ctx, slog.LevelWarn, "relay: polling a video task failed; retrying",
				slog.String("task", task.ID), slog.String("upstream", u.Name), slog.String("error", err.Error()))
		default:
			return nil, failure(err)
		}
	}
}

// create makes the task upstream.
func (b videoBackend) create(ctx context.Context, task *videos.Task) (*upstreamVideo, *Upstream, error) {
	var (
		path string
		req  any
	)
	switch {
	case task.Request.Multimodal != nil:
		path, req = "/vendorai/videos", task.Request.Multimodal
	case task.Request.Create != nil:
		path, req = "/videos", task.Request.Create
	default:
		return nil, nil, apierrors.Internal(errors.New("relay: video task without a request"))
	}
	body, err := parseRequestBody(nil, req)
	if err != nil {
		return nil, nil, err
	}
	build := postJSON(path, body, false)
	res, u, err := b.r.do(ctx, task.Model, func(ctx context.Context, u *Upstream) (*http.Request, error) {
		req, err := build(ctx, u)
		if err == nil {
			req.Header.Set("Idempotency-Key", task.ID)
		}
		return req, err
	})
	if err != nil {
		// Every upstream failed (502 or 504), or the model is not routed.
		return nil, nil, newVideoScrub(nil, "", task.ID).apiError(err)
	}
	v, err := readVideo(res, u, newVideoScrub(u, "", task.ID))
	if err != nil {
		return nil, nil, err
	}
	return v, u, nil
}

// poll reads the upstream task once, from the upstream that has it: no
// failover.
func (b videoBackend) poll(ctx context.Context, u *Upstream, path string, scrub videoScrub) (*upstreamVideo, error) {
	res, _, err := b.r.send(ctx, u, func(ctx context.Context, u *Upstream) (*http.Request, error) {
		return newJSONRequest(ctx, http.MethodGet, u.URL(path), nil)
	})
	if err != nil {
		return nil, scrub.apiError(err)
	}
	return readVideo(res, u, scrub)
}

// readVideo reads an upstream's video task reply, and closes it.
func readVideo(res *http.Response, u *Upstream, scrub videoScrub) (*upstreamVideo, error) {
	if res.StatusCode != http.StatusOK {
		return nil, videoUpstreamError(res, u, scrub)
	}
	defer res.Body.Close()
	var v upstreamVideo
	if err := readReply(res.Body, u, unmarshalInto(&v)); err != nil {
		return nil, scrub.apiError(err)
	}
	if v.ID == "" {
		return nil, malformed(u, "video task", errors.New("no id"), nil)
	}
	if p, ok := percent(v.RawProgress); ok {
		v.Progress = &p
	}
	if ms, err := strconv.ParseFloat(res.Header.Get("Openai-Poll-After-Ms"), 64); err == nil && ms > 0 && ms < 1e9 {
		v.pollAfter = time.Duration(ms * float64(time.Millisecond))
	}
	return &v, nil
}

// percent reads a progress sent as a number (whole or not) or as decimal
// text ("45", "45.5", "45%"), clamped to 0–100.
func percent(raw any) (int, bool) {
	var f float64
	switch p := raw.(type) {
	case float64:
		f = p
	case string:
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(p), "%"), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return int(min(max(f, 0), 100)), true
}

// retryAfterOf is the wait that an upstream's 429 asked for; zero if none.
func retryAfterOf(err error) time.Duration {
	var e *apierrors.Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}

// result fetches the content of a completed upstream task.
func (b videoBackend) result(ctx context.Context, u *Upstream, path string, v *upstreamVideo, scrub videoScrub) (*videos.Result, error) {
	video, err := b.media(ctx, u, path+"/content", scrub)
	if err != nil {
		return nil, failure(err)
	}
	res := &videos.Result{Video: *video, RemixedFromVideoID: v.RemixedFromVideoID}
	thumb, err := b.media(ctx, u, path+"/content?variant=thumbnail", scrub)
	switch {
	case err == nil:
		res.Thumbnail = thumb
	case ctx.Err() != nil:
		return nil, ctx.Err()
	default:
		b.r.logger.LogAttrs(ctx, slog.LevelDebug, "relay: no thumbnail for a video task",
			slog.String("upstream", u.Name), slog.String("upstream_task", v.ID), slog.String("error", err.Error()))
	}
	if v.ExpiresAt > 0 {
		res.ExpiresAt = time.Unix(v.ExpiresAt, 0)
	}
	if md := v.Metadata; md != nil {
		res.Metadata = videos.Metadata{Duration: md.Duration, Width: md.Width, Height: md.Height, FPS: md.FPS, Seed: md.Seed}
	}
	if res.Metadata.Duration == 0 {
		res.Metadata.Duration = secondsOf(v.Seconds)
	}
	if res.Metadata.Width == 0 {
		var w, h int
		if _, err := fmt.Sscanf(v.Size, "%dx%d", &w, &h); err == nil && w > 0 && h > 0 {
			res.Metadata.Width, res.Metadata.Height = w, h
		}
	}
	return res, nil
}

// media fetches a video or thumbnail: its bytes, or the URL that the
// upstream redirects to.
func (b videoBackend) media(ctx context.Context, u *Upstream, path string, scrub videoScrub) (*videos.Media, error) {
	res, _, err := b.r.send(ctx, u, func(ctx context.Context, u *Upstream) (*http.Request, error) {
		req, err := newJSONRequest(ctx, http.MethodGet, u.URL(path), nil)
		if err == nil {
			req.Header.Del("Accept")
		}
		return req, err
	})
	if err != nil {
		return nil, scrub.apiError(err)
	}
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		res.Body.Close()
		loc, err := res.Location()
		if err != nil {
			return nil, malformed(u, "redirect", err, nil)
		}
		if err := checkMediaURL(loc, u); err != nil {
			return nil, apierrors.BadGateway("The upstream redirected the video to a location that the gateway does not pass on.", err)
		}
		return &videos.Media{URL: loc.String()}, nil
	default:
		return nil, videoUpstreamError(res, u, scrub)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, b.r.maxMedia+1))
	if err != nil {
		return nil, scrub.apiError(readError(err, u))
	}
	if int64(len(data)) > b.r.maxMedia {
		return nil, apierrors.BadGateway("The upstream's video is too large.",
			fmt.Errorf("relay: upstream %s: %s is larger than %d bytes", u.Name, path, b.r.maxMedia))
	}
	return &videos.Media{ContentType: mediaType(res.Header.Get("Content-Type"), data), Data: data}, nil
}

// mediaType is the type to store a video or thumbnail that an upstream
// sent as declared: the declared type if it is one of mediaTypes, else
// the type its bytes sniff as if that is one, else
// application/octet-stream, which the content endpoint serves for
// download only. An upstream cannot make the gateway serve a page
// (text/html, image/svg+xml…) on its origin.
func mediaType(declared string, data []byte) string {
	if ct, ok := mediaTypes.Type(declared); ok {
		return ct
	}
	ct, _ := mediaTypes.Type(http.DetectContentType(data))
	return ct
}

// mediaTypes are the types that the relay keeps an upstream's content
// as: those a video or thumbnail is served as (video/mp4, video/webm,
// image/png, image/jpeg, image/webp), and the other video and image
// types that videos.FileStore keeps (video/quicktime, image/gif), which
// the content endpoint serves for download.
var mediaTypes = slices.Concat(mediareply.Video, mediareply.Types{"video/quicktime", "image/gif"})

// checkMediaURL accepts the location of an upstream's content if it is
// an https URL, or an http URL of an upstream whose own base URL is http
// (the redirect is then no less safe than the upstream it came from):
// never a javascript:, data: or file: URL, which a client would be sent
// to.
func checkMediaURL(loc *url.URL, u *Upstream) error {
	scheme := strings.ToLower(loc.Scheme)
	if loc.Host != "" && (scheme == "https" || scheme == "http" && strings.HasPrefix(strings.ToLower(u.BaseURL), "http:")) {
		return nil
	}
	return fmt.Errorf("relay: upstream %s: content redirected to a URL of scheme %s (host %s), not https", u.Name, apierrors.Quote(loc.Scheme), apierrors.Quote(loc.Host))
}

// failure turns an error into the task's failure: an *apierrors.Error
// keeps its code and message; the client's departure and other errors
// pass as they are.
func failure(err error) error {
	var e *apierrors.Error
	if errors.As(err, &e) {
		return &videos.Failure{Code: string(e.Code), Message: e.Message, Err: err}
	}
	return err
}

// upstreamFailure is the failure of a task that failed upstream: the
// upstream's code and message, cleaned with scrub.
func upstreamFailure(v *upstreamVideo, scrub videoScrub) error {
	f := &videos.Failure{Message: "Video generation failed upstream.", Err: fmt.Errorf("relay: upstream task %s: %s", v.ID, v.Status)}
	if v.Error != nil {
		f.Code = scrub.code(codeText(v.Error.Code))
		if msg := strings.TrimSpace(scrub.text(v.Error.Message)); msg != "" {
			f.Message = msg
		}
		f.Err = fmt.Errorf("%w: %s: %s", f.Err, codeText(v.Error.Code), Redact(v.Error.Message))
	}
	return f
}

// retriable reports whether a failed poll may be tried again: the
// upstream was unreachable, slow, failed with a 5xx (502/504 here), or
// asked to slow down (429).
func retriable(err error) bool {
	var e *apierrors.Error
	return errors.As(err, &e) && (e.Code == apierrors.CodeBadGateway || e.Code == apierrors.CodeGatewayTimeout || e.Status == http.StatusTooManyRequests)
}

// codeText spells a JSON code (string or number) as text.
func codeText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return ""
}

// secondsOf reads a task's seconds, sent as a string or a number.
func secondsOf(s any) float64 {
	switch s := s.(type) {
	case float64:
		return s
	case string:
		f, _ := strconv.ParseFloat(s, 64)
		return f
	}
	return 0
}
