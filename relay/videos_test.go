package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// createVideo creates a task on the gateway and returns its id.
func (g *gateway) createVideo(t *testing.T, path, body string) string {
	t.Helper()
	res := g.post(t, path, body)
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, 200, res.StatusCode, string(b))
	v := decode(t, strings.NewReader(string(b)))
	require.Equal(t, "queued", v["status"])
	id := v["id"].(string)
	require.True(t, strings.HasPrefix(id, "task_"))
	return id
}

// waitVideo polls the gateway's status endpoint until the task is done.
func (g *gateway) waitVideo(t *testing.T, id string) map[string]any {
	t.Helper()
	var v map[string]any
	require.Eventually(t, func() bool {
		res := g.get(t, "/v1/videos/"+id)
		require.Equal(t, 200, res.StatusCode)
		v = decode(t, res.Body)
		return v["status"] == "completed" || v["status"] == "failed"
	}, 10*time.Second, 5*time.Millisecond)
	return v
}

func TestVideoRelayed(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-ok","prompt":"a red fox","seconds":4,"size":"640x360","x_vendor":{"style":"noir"}}`)
	v := g.waitVideo(t, id)
	require.Equal(t, "completed", v["status"])
	require.Equal(t, id, v["id"], "the gateway's own task id")
	require.Equal(t, "pub-ok", v["model"])
	require.Equal(t, float64(100), v["progress"])
	md := v["metadata"].(map[string]any)
	require.Equal(t, float64(640), md["width"])
	require.Equal(t, float64(24), md["fps"])
	require.NotContains(t, md["url"], g.up.URL, "the upstream's own content URL is not shown")

	// The upstream got the task's request with its model name, and the
	// gateway's task id as the idempotency key.
	creates := 0
	for _, r := range g.up.Requests() {
		if r.Method == "POST" {
			creates++
			require.Equal(t, "/v1/videos", r.Path)
			require.Equal(t, id, r.Header.Get("Idempotency-Key"))
			require.Equal(t, "Bearer "+upstreamKey, r.Header.Get("Authorization"))
			require.JSONEq(t, `{"model":"ok","prompt":"a red fox","seconds":"4","size":"640x360","x_vendor":{"style":"noir"}}`, string(r.Body))
		}
	}
	require.Equal(t, 1, creates)

	res := g.get(t, "/v1/videos/"+id+"/content")
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	b, _ := io.ReadAll(res.Body)
	require.Equal(t, relaytest.VideoContent, string(b))
	res = g.get(t, "/v1/videos/"+id+"/content?variant=thumbnail")
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "image/png", res.Header.Get("Content-Type"))
	b, _ = io.ReadAll(res.Body)
	require.Equal(t, relaytest.ThumbnailContent, string(b))
}

func TestVideoMultimodalRelayed(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/vendorai/videos", `{"model":"pub-ok","mode":"t2v","prompt":"waves","resolution":"720p","gen_tier":"fast"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	first := g.up.Requests()[0]
	require.Equal(t, "/v1/vendorai/videos", first.Path)
	require.JSONEq(t, `{"model":"ok","mode":"t2v","prompt":"waves","resolution":"720p","gen_tier":"fast"}`, string(first.Body))
}

// TestVideoContentRedirect: content that the upstream redirects to is
// not copied: the gateway's content endpoint redirects to the same place.
func TestVideoContentRedirect(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-redirect","prompt":"x"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	res := g.get(t, "/v1/videos/"+id+"/content")
	require.Equal(t, 301, res.StatusCode)
	require.Regexp(t, `^`+g.up.URL+`/cdn/video_up\d+\.mp4$`, res.Header.Get("Location"))
	res = g.get(t, "/v1/videos/"+id+"/content?variant=thumbnail")
	require.Equal(t, 301, res.StatusCode)
	require.Regexp(t, `^`+g.up.URL+`/cdn/video_up\d+\.png$`, res.Header.Get("Location"))
	for _, r := range g.up.Requests() {
		require.NotContains(t, r.Path, "/cdn/", "the relay did not follow the redirect")
	}
}

func TestVideoFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, code, message string
	}{
		{relaytest.ModeVideoFail, "content_policy", "The prompt was rejected."},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil)
			id := g.createVideo(t, "/v1/videos", `{"model":"pub-`+tc.mode+`","prompt":"x"}`)
			v := g.waitVideo(t, id)
			require.Equal(t, "failed", v["status"])
			require.Equal(t, map[string]any{"code": tc.code, "message": tc.message}, v["error"])
		})
	}
}

// multipartVideo is a create request as the official SDKs send it.
func multipartVideo(t *testing.T, fields map[string]string) (string, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	require.NoError(t, mw.Close())
	return buf.String(), mw.FormDataContentType()
}

// requireNoTasks checks that the gateway stored no task.
func (g *gateway) requireNoTasks(t *testing.T) {
	t.Helper()
	require.Zero(t, g.tasks.Len(), "a refused creation stores no task")
}

// TestVideoCreateRefusedUpstreamIsRefusedAtOnce: the relay creates the
// task upstream before it answers, so that a request the upstream
// refuses is refused to the client at once, with the upstream's 400 in
// the flat shape, and not accepted as a task that fails later: on JSON,
// on multipart (the SDKs' encoding) and on the multimodal path.
func TestVideoCreateRefusedUpstreamIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		path          string
		fields        map[string]string
		code, message string
	}{
		{"BadSeconds", "/v1/videos", map[string]string{"model": "pub-ok", "prompt": "x", "seconds": "5"},
			"invalid_value", "Invalid value: '5'. Supported values are: '4', '8', '12'."},
		{"BadSize", "/v1/videos", map[string]string{"model": "pub-ok", "prompt": "x", "size": "999x999"},
			"invalid_value", "Invalid value: '999x999'. Supported values are: '640x360', '1280x720', '720x1280'."},
		{"MissingSize", "/v1/videos", map[string]string{"model": "pub-video-size-required", "prompt": "x", "seconds": "4"},
			"invalid_value", "Missing required parameter: 'size'."},
		{"UnknownModelUpstream", "/v1/videos", map[string]string{"model": "pub-video-unknown-model", "prompt": "x"},
			"model_not_found", "The model 'video-unknown-model' does not exist or you do not have access to it."},
		{"Status400", "/v1/videos", map[string]string{"model": "pub-status-400", "prompt": "x"},
			"invalid_value", "Invalid value for 'temperature'."},
		{"MultimodalUnknownModelUpstream", "/v1/vendorai/videos", map[string]string{"model": "pub-video-unknown-model", "mode": "t2v", "prompt": "x"},
			"model_not_found", "The model 'video-unknown-model' does not exist or you do not have access to it."},
		{"MultimodalStatus400", "/v1/vendorai/videos", map[string]string{"model": "pub-status-400", "mode": "t2v", "prompt": "x"},
			"invalid_value", "Invalid value for 'temperature'."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, nil)
			js, err := json.Marshal(tc.fields)
			require.NoError(t, err)
			bodies := [][2]string{{string(js), "application/json"}}
			if tc.path == "/v1/videos" {
				body, ct := multipartVideo(t, tc.fields)
				bodies = append(bodies, [2]string{body, ct})
			}
			for _, b := range bodies {
				res := g.post(t, tc.path, b[0], "Content-Type", b[1])
				data, _ := io.ReadAll(res.Body)
				require.Equal(t, 400, res.StatusCode, "%s: %s", b[1], data)
				v := decode(t, bytes.NewReader(data))
				require.Equal(t, tc.code, v["code"], "%s: %s", b[1], data)
				require.Equal(t, tc.message, v["message"])
				require.Equal(t, tc.message, errorOf(t, string(data))["message"], "the SDKs read the error object")
			}
			g.requireNoTasks(t)
			posts := 0
			for _, r := range g.up.Requests() {
				require.Equal(t, "POST", r.Method, "nothing polled: there is no task")
				posts++
			}
			require.Equal(t, len(bodies), posts)
		})
	}
}

// TestVideoUpstreamFailureOnCreateIsA502AtOnce: an upstream that fails
// (5xx) or cannot be reached refuses the creation with 502.
func TestVideoUpstreamFailureOnCreateIsA502AtOnce(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	res := g.post(t, "/v1/videos", `{"model":"pub-status-500","prompt":"x"}`)
	data, _ := io.ReadAll(res.Body)
	require.Equal(t, 502, res.StatusCode, "%s", data)
	v := decode(t, bytes.NewReader(data))
	require.Equal(t, "bad_gateway", v["code"])
	require.Equal(t, "The upstream failed (HTTP 500).", v["message"])
	g.requireNoTasks(t)
}

// TestVideoUpstreamRefusingTheGatewaysKeyIsA502: an upstream 401 or 403
// means the gateway's own upstream key is wrong, not the client's: 502
// bad_gateway saying so, and the upstream's reply is not shown.
func TestVideoUpstreamRefusingTheGatewaysKeyIsA502(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(up *relaytest.Upstream)
		model string
	}{
		{"Status401", nil, "pub-status-401"},
		{"WrongUpstreamKey", func(up *relaytest.Upstream) { up.Key = "sk-another-key-entirely" }, "pub-ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, tc.setup)
			for _, path := range []string{"/v1/videos", "/v1/vendorai/videos"} {
				res := g.post(t, path, `{"model":"`+tc.model+`","mode":"t2v","prompt":"x"}`)
				data, _ := io.ReadAll(res.Body)
				require.Equal(t, 502, res.StatusCode, "%s", data)
				v := decode(t, bytes.NewReader(data))
				require.Equal(t, "bad_gateway", v["code"])
				require.Contains(t, v["message"], "The upstream refused the gateway's credentials")
				require.NotContains(t, string(data), "Incorrect API key", "the upstream's reply goes to the log only")
			}
			g.requireNoTasks(t)
		})
	}
}

// TestVideoProgressRisesAsUpstream: the gateway's status shows the
// upstream's progress as it rises, even when the relay's own poll
// interval is long: it polls soon after the creation, and follows the
// upstream's openai-poll-after-ms hint.
func TestVideoProgressRisesAsUpstream(t *testing.T) {
	t.Parallel()
	g := newGateway(t, func(up *relaytest.Upstream) {
		up.Video.Polls = 10
		up.Video.PollAfter = 5 * time.Millisecond
	}, relay.WithPollInterval(time.Hour))
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-ok","prompt":"a red fox"}`)
	var seen []int
	require.Eventually(t, func() bool {
		res := g.get(t, "/v1/videos/"+id)
		v := decode(t, res.Body)
		p := int(v["progress"].(float64))
		if len(seen) == 0 || seen[len(seen)-1] != p {
			seen = append(seen, p)
		}
		return v["status"] == "completed"
	}, 20*time.Second, 2*time.Millisecond)
	require.True(t, slices.IsSorted(seen), "progress never goes down: %v", seen)
	between := 0
	for _, p := range seen {
		if p > 0 && p < 100 {
			between++
		}
	}
	require.GreaterOrEqual(t, between, 2, "the progress rose step by step: %v", seen)
}

// TestVideoStoredRefIsPolledNeverCreatedAgain: the upstream task's id is
// stored with the gateway's task, so that another runner (a restart,
// another replica) with a fresh relay polls the same upstream task and
// never creates it again.
func TestVideoStoredRefIsPolledNeverCreatedAgain(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	routes := []relay.Route{{Model: "pub-ok", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Model: relaytest.ModeOK}}}}
	first, err := relay.New(routes)
	require.NoError(t, err)

	task := &videos.Task{ID: videos.NewID(), Owner: "alice", Model: "pub-ok", Status: videos.StatusQueued, CreatedAt: time.Now(),
		Request: videos.Request{Create: &videos.CreateRequest{Model: "pub-ok", Prompt: "a red fox"}}}
	ref, err := first.Videos().(videos.Submitter).Submit(t.Context(), task)
	require.NoError(t, err)
	require.NotEmpty(t, ref)
	require.Len(t, up.Requests(), 1)
	task.BackendRef = ref
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	require.NoError(t, store.Create(t.Context(), task))

	// Another process: a new relay, a new runner, the same store.
	second, err := relay.New(routes, relay.WithPollInterval(time.Millisecond))
	require.NoError(t, err)
	rn := runner.New(store, second.Videos(), contents, runner.WithPollInterval(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = rn.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var got *videos.Task
	require.Eventually(t, func() bool {
		got, err = store.Get(t.Context(), "alice", task.ID)
		require.NoError(t, err)
		return got.Status.Terminal()
	}, 10*time.Second, time.Millisecond)
	require.Equal(t, videos.StatusCompleted, got.Status, "%+v", got.Error)

	posts, polls := 0, 0
	for _, r := range up.Requests() {
		switch {
		case r.Method == "POST":
			posts++
		case r.Method == "GET" && strings.HasPrefix(r.Path, "/v1/videos/video_up1") && !strings.Contains(r.Path, "/content"):
			polls++
		}
	}
	require.Equal(t, 1, posts, "created once, by Submit")
	require.Positive(t, polls)
}

// TestVideoErrorsKeepUpstreamDetailsOut: a failed task's error shows
// neither the upstream's task id nor its internal addresses or keys.
func TestVideoErrorsKeepUpstreamDetailsOut(t *testing.T) {
	t.Parallel()
	leaks := []string{"video_up", "127.0.0.1", "10.1.2.3", "cluster.internal", "sk-upstream", "/internal/render"}

	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-leak","prompt":"x"}`)
	v := g.waitVideo(t, id)
	require.Equal(t, "failed", v["status"])
	e := v["error"].(map[string]any)
	require.Equal(t, "worker_error", e["code"])
	msg := e["message"].(string)
	require.Contains(t, msg, "Task "+id+" failed on", "the upstream's id is replaced by the gateway's")
	for _, l := range leaks {
		require.NotContains(t, msg, l)
	}

	// A task whose upstream task is gone: the upstream's 404 names its
	// own id, which the client never sees.
	up := g.up
	r, err := relay.New([]relay.Route{{Model: "pub-ok", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Key: upstreamKey, Model: relaytest.ModeOK}}}})
	require.NoError(t, err)
	task := &videos.Task{ID: videos.NewID(), Model: "pub-ok", BackendRef: `{"upstream":"` + strings.TrimPrefix(up.URL, "http://") + `","id":"video_gone42"}`}
	_, err = r.Videos().Generate(t.Context(), task, func(int) {})
	var f *videos.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, "not_found", f.Code)
	require.Equal(t, "Video with id '"+task.ID+"' not found.", f.Message)
}
func TestVideoWithoutThumbnail(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-no-thumbnail","prompt":"x"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	require.Equal(t, 200, g.get(t, "/v1/videos/"+id+"/content").StatusCode)
	require.Equal(t, 404, g.get(t, "/v1/videos/"+id+"/content?variant=thumbnail").StatusCode)
}

// TestVideoUpstream401IsLoggedWithoutCredentials: the upstream's reply to
// a refused key goes to the log (as the error's cause), with the
// credentials it echoes taken out; the client's message says nothing of
// it.
func TestVideoUpstream401IsLoggedWithoutCredentials(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, `{"error":{"message":"Incorrect API key provided: `+r.Header.Get("Authorization")+` at gw-3.corp.internal","type":"invalid_request_error","code":"invalid_api_key"}}`)
		}))
		t.Cleanup(up.Close)
		r, err := relay.New([]relay.Route{{Model: "pub", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: "sk-upstream-secret-999999"}}}})
		require.NoError(t, err)
		task := &videos.Task{ID: videos.NewID(), Model: "pub", Request: videos.Request{Create: &videos.CreateRequest{Model: "pub", Prompt: "x"}}}
		_, err = r.Videos().(videos.Submitter).Submit(t.Context(), task)
		var e *apierrors.Error
		require.ErrorAs(t, err, &e)
		require.Equal(t, 502, e.Status)
		require.Equal(t, apierrors.CodeBadGateway, e.Code)
		require.Contains(t, e.Message, fmt.Sprintf("The upstream refused the gateway's credentials (HTTP %d %s)", status, http.StatusText(status)))
		require.NotContains(t, e.Message, "Incorrect API key")
		logged := err.Error()
		require.Contains(t, logged, "Incorrect API key provided: Bearer [redacted]", "the upstream's reply is logged")
		require.NotContains(t, logged, "sk-upstream-secret")
	}
}

// TestVideoTaskTakenOverMidwayIsNotCreatedAgain: a runner that stops in
// the middle of a task releases it; another process's runner, with a
// fresh relay, carries on polling the same upstream task.
func TestVideoTaskTakenOverMidwayIsNotCreatedAgain(t *testing.T) {
	t.Parallel()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	up.Video.Polls = 300
	routes := []relay.Route{{Model: "pub-ok", Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Model: relaytest.ModeOK}}}}
	store, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	catalog := models.NewMemoryCatalog(models.Model{ID: "pub-ok", EndpointTypes: []models.EndpointType{models.CompatVideo}})

	first, err := relay.New(routes, relay.WithPollInterval(time.Millisecond))
	require.NoError(t, err)
	h := videos.NewHandler(store, catalog, contents, videos.WithSubmitter(first.Videos().(videos.Submitter)),
		videos.WithOwner(func(context.Context) (string, bool) { return "alice", true }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/videos", strings.NewReader(`{"model":"pub-ok","prompt":"a red fox"}`)))
	require.Equal(t, 200, rec.Code, rec.Body.String())
	id := decode(t, rec.Body)["id"].(string)

	run := func(gen videos.Generator) (stop func()) {
		rn := runner.New(store, gen, contents, runner.WithPollInterval(time.Millisecond))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = rn.Run(ctx); close(done) }()
		return func() { cancel(); <-done }
	}
	stopFirst := run(first.Videos())
	require.Eventually(t, func() bool {
		task, err := store.Get(t.Context(), "alice", id)
		require.NoError(t, err)
		return task.Progress > 0
	}, 10*time.Second, time.Millisecond)
	stopFirst() // cancelled: the task is released with its progress

	second, err := relay.New(routes, relay.WithPollInterval(time.Millisecond))
	require.NoError(t, err)
	stopSecond := run(second.Videos())
	t.Cleanup(stopSecond)
	var task *videos.Task
	require.Eventually(t, func() bool {
		task, err = store.Get(t.Context(), "alice", id)
		require.NoError(t, err)
		return task.Status.Terminal()
	}, 20*time.Second, time.Millisecond)
	require.Equal(t, videos.StatusCompleted, task.Status, "%+v", task.Error)
	require.Equal(t, 2, task.Attempts, "taken over once")
	posts := 0
	for _, r := range up.Requests() {
		if r.Method == "POST" {
			posts++
		}
	}
	require.Equal(t, 1, posts, "created once, at the creation request")
}
