package videos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/videos"
)

// The SDK polls every pollMs milliseconds in these tests (it would wait
// for the server's openai-poll-after-ms otherwise).
const pollMs = 5

func sdkClient(b *testBundle, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(b.server.URL+"/v1/"), option.WithAPIKey(key),
		option.WithMaxRetries(0), option.WithHTTPClient(b.server.Client()))
}

func demoParams(prompt string) openai.VideoNewParams {
	return openai.VideoNewParams{
		Model:   openai.VideoModel(demo.VideoModelGeneral),
		Prompt:  prompt,
		Seconds: openai.VideoSeconds("8"),
		Size:    openai.VideoSize("1280x720"),
	}
}

func TestSDKNewAndPollThenDownloadVideoAndThumbnail(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{runner: true})
	client := sdkClient(b, keyAlice)
	ctx := t.Context()

	v, err := client.Videos.NewAndPoll(ctx, demoParams("a paper boat on a pond"), pollMs)
	require.NoError(t, err)
	require.Equal(t, openai.VideoStatusCompleted, v.Status)
	require.EqualValues(t, 100, v.Progress)
	require.Equal(t, openai.VideoSeconds("8"), v.Seconds)
	require.Equal(t, openai.VideoSize("1280x720"), v.Size)
	require.Equal(t, openai.VideoModel(demo.VideoModelGeneral), v.Model)
	require.NotZero(t, v.CompletedAt)
	require.True(t, strings.HasPrefix(v.ID, "task_"))
	var raw struct {
		Error    *json.RawMessage `json:"error"`
		Metadata videos.Metadata  `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal([]byte(v.RawJSON()), &raw))
	require.Nil(t, raw.Error)
	require.Equal(t, videos.Metadata{URL: "/v1/videos/" + v.ID + "/content",
		ThumbnailURL: "/v1/videos/" + v.ID + "/content?variant=thumbnail",
		Duration:     8, Width: 1280, Height: 720, FPS: 24, Seed: raw.Metadata.Seed}, raw.Metadata)

	// The video: the demo generator's bytes for this task, as it made them.
	res, err := client.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{})
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
	got, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	task, err := b.store.Get(ctx, "owner:alice", v.ID)
	require.NoError(t, err)
	want, err := demo.NewVideoGenerator(demo.WithVideoDuration(0)).Generate(ctx, task, func(int) {})
	require.NoError(t, err)
	require.Equal(t, want.Video.Data, got)
	require.Equal(t, "ftyp", string(got[4:8]))

	res, err = client.Videos.DownloadContent(ctx, v.ID, openai.VideoDownloadContentParams{Variant: openai.VideoDownloadContentParamsVariantThumbnail})
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "image/png", res.Header.Get("Content-Type"))
	img, err := png.Decode(res.Body)
	require.NoError(t, err)
	require.Equal(t, 640, img.Bounds().Dx())
}

func TestSDKNewWithAnInputReference(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{runner: true})
	client := sdkClient(b, keyAlice)
	ctx := t.Context()

	file := demoParams("animate this")
	file.InputReference = openai.VideoNewParamsInputReferenceUnion{OfFile: bytes.NewReader(pngImage)}
	byURL := demoParams("animate that")
	byURL.InputReference = openai.VideoNewParamsInputReferenceUnion{OfImageInputReference: &openai.ImageInputReferenceParam{
		ImageURL: openai.String(dataURI("image/png", pngImage)),
	}}
	for name, p := range map[string]openai.VideoNewParams{"file": file, "image_url": byURL} {
		v, err := client.Videos.New(ctx, p)
		require.NoError(t, err, name)
		require.Equal(t, openai.VideoStatusQueued, v.Status, name)
		task, err := b.store.Get(ctx, "owner:alice", v.ID)
		require.NoError(t, err)
		typ, data, err := videos.DecodeDataURI(task.Request.Create.InputReference.ImageURL)
		require.NoError(t, err, name)
		require.Equal(t, "image/png", typ)
		require.Equal(t, pngImage, data, name)

		done, err := client.Videos.PollStatus(ctx, v.ID, pollMs)
		require.NoError(t, err)
		require.Equal(t, openai.VideoStatusCompleted, done.Status, name)
	}

	// A file that is not an image is refused with a message the SDK shows.
	bad := demoParams("x")
	bad.InputReference = openai.VideoNewParamsInputReferenceUnion{OfFile: strings.NewReader("not an image")}
	_, err := client.Videos.New(ctx, bad)
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	require.Equal(t, "invalid_request", apiErr.Code)
	require.Contains(t, apiErr.Message, "must be a PNG, JPEG or WebP image")
}

func TestSDKGetShowsProgressThenPollStatusWaits(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	client := sdkClient(b, keyAlice)
	ctx := t.Context()
	v, err := client.Videos.New(ctx, demoParams("slow"))
	require.NoError(t, err)

	got, err := client.Videos.Get(ctx, v.ID)
	require.NoError(t, err)
	require.Equal(t, openai.VideoStatusQueued, got.Status)

	task := b.claim(t)
	b.update(t, task, videos.UpdateParams{Progress: 60})
	got, err = client.Videos.Get(ctx, v.ID)
	require.NoError(t, err)
	require.Equal(t, openai.VideoStatusInProgress, got.Status)
	require.EqualValues(t, 60, got.Progress)

	polled := make(chan *openai.Video, 1)
	go func() {
		v, err := client.Videos.PollStatus(context.Background(), v.ID, pollMs)
		if err != nil {
			t.Error(err)
		}
		polled <- v
	}()
	b.update(t, task, videos.UpdateParams{Fail: &videos.TaskError{Code: "content_policy_violation", Message: "Refused."}})
	done := wait(t, polled)
	require.Equal(t, openai.VideoStatusFailed, done.Status)
	require.Equal(t, "content_policy_violation", done.Error.Code)
	require.Equal(t, "Refused.", done.Error.Message)
}

func TestSDKFailedTask(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{runner: true})
	client := sdkClient(b, keyAlice)
	v, err := client.Videos.NewAndPoll(t.Context(), demoParams("this one should #fail"), pollMs)
	require.NoError(t, err, "a failed task is no HTTP error")
	require.Equal(t, openai.VideoStatusFailed, v.Status)
	require.Equal(t, "generation_failed", v.Error.Code)
	require.Contains(t, v.Error.Message, "#fail")

	_, err = client.Videos.DownloadContent(t.Context(), v.ID, openai.VideoDownloadContentParams{})
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	require.Contains(t, apiErr.Message, "has status failed")
}

func TestSDKShowsTheMessageOfFlatErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	client := sdkClient(b, keyAlice)
	tests := []struct {
		name     string
		params   openai.VideoNewParams
		wantCode string
		wantMsg  string
	}{
		{"seconds", func() openai.VideoNewParams { p := demoParams("x"); p.Seconds = "5"; return p }(), "invalid_request", "seconds must be one of 4, 8, 12, 16, 20"},
		{"size", func() openai.VideoNewParams { p := demoParams("x"); p.Size = ""; return p }(), "invalid_request", "size is required"},
		{"model", func() openai.VideoNewParams { p := demoParams("x"); p.Model = "sora-2"; return p }(), "model_not_found", `The model "sora-2" does not exist`},
		{"prompt", func() openai.VideoNewParams { p := demoParams(strings.Repeat("字", 2501)); return p }(), "invalid_request", "prompt must be at most 2500 characters, got 2501"},
	}
	for _, tc := range tests {
		_, err := client.Videos.New(t.Context(), tc.params)
		var apiErr *openai.Error
		require.ErrorAs(t, err, &apiErr, tc.name)
		require.Equal(t, http.StatusBadRequest, apiErr.StatusCode, tc.name)
		require.Equal(t, tc.wantCode, apiErr.Code, tc.name)
		require.Contains(t, apiErr.Message, tc.wantMsg, tc.name)
	}
}

func TestSDKListAndDelete(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	client := sdkClient(b, keyAlice)
	ctx := t.Context()
	var ids []string
	for i := range 5 {
		b.now = b.now.Add(time.Second)
		v, err := client.Videos.New(ctx, demoParams("clip "+string(rune('a'+i))))
		require.NoError(t, err)
		ids = append(ids, v.ID)
	}
	bob := sdkClient(b, keyBob)
	_, err := bob.Videos.New(ctx, demoParams("bob's"))
	require.NoError(t, err)

	page, err := client.Videos.List(ctx, openai.VideoListParams{Limit: openai.Int(2)})
	require.NoError(t, err)
	require.Len(t, page.Data, 2)
	require.True(t, page.HasMore)
	require.Equal(t, ids[4], page.Data[0].ID)

	var listed []string
	iter := client.Videos.ListAutoPaging(ctx, openai.VideoListParams{Limit: openai.Int(2)})
	for iter.Next() {
		listed = append(listed, iter.Current().ID)
	}
	require.NoError(t, iter.Err())
	require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, listed, "newest first, over three pages")

	asc, err := client.Videos.List(ctx, openai.VideoListParams{Order: openai.VideoListParamsOrderAsc})
	require.NoError(t, err)
	require.Equal(t, ids[0], asc.Data[0].ID)

	del, err := client.Videos.Delete(ctx, ids[2])
	require.NoError(t, err)
	require.True(t, del.Deleted)
	require.Equal(t, ids[2], del.ID)
	require.Equal(t, "video.deleted", string(del.Object))

	_, err = client.Videos.Get(ctx, ids[2])
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusNotFound, apiErr.StatusCode)
	require.Contains(t, apiErr.Message, "No video task found")

	_, err = bob.Videos.Delete(ctx, ids[1])
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusNotFound, apiErr.StatusCode, "bob cannot delete alice's")
}

// TestSDKDownloadContentFromObjectStorage shows the trade-off of
// WithContentProxy: the official Go SDK refuses the cross-origin
// redirect, follows a same-origin one, and reads a streamed result.
func TestSDKDownloadContentFromObjectStorage(t *testing.T) {
	t.Parallel()
	download := func(t *testing.T, b *testBundle) ([]byte, error) {
		client := sdkClient(b, keyAlice)
		v, err := client.Videos.NewAndPoll(t.Context(), demoParams("stored elsewhere"), pollMs)
		require.NoError(t, err)
		require.Equal(t, openai.VideoStatusCompleted, v.Status)
		res, err := client.Videos.DownloadContent(t.Context(), v.ID, openai.VideoDownloadContentParams{})
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		return io.ReadAll(res.Body)
	}
	urlStore := func(t *testing.T, base string, dir string) videos.ContentStore {
		s, err := videos.NewURLStore(dir, base)
		require.NoError(t, err)
		return s
	}

	t.Run("cross-origin redirect is refused by the SDK", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		b := setup(t, bundleOptions{runner: true, contents: urlStore(t, cdn(t, dir).URL+"/media", dir)})
		_, err := download(t, b)
		require.ErrorContains(t, err, "origin", "the SDK's origin guard")
	})
	t.Run("streaming through the gateway works", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		b := setup(t, bundleOptions{runner: true, contents: urlStore(t, cdn(t, dir).URL+"/media", dir),
			handler: []videos.Option{videos.WithContentProxy(nil)}})
		got, err := download(t, b)
		require.NoError(t, err)
		require.Equal(t, "ftyp", string(got[4:8]))
	})
	t.Run("same-origin redirect is followed", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		var b *testBundle
		store := &lazyURLStore{dir: dir}
		b = setup(t, bundleOptions{runner: true, contents: store, mux: func(mux *http.ServeMux) {
			mux.Handle("GET /media/", http.StripPrefix("/media/", http.FileServer(http.Dir(dir))))
		}})
		store.set(t, b.server.URL+"/media")
		got, err := download(t, b)
		require.NoError(t, err)
		require.Equal(t, "ftyp", string(got[4:8]))
	})
}

// lazyURLStore is a URLStore whose base URL is known only once the test
// server runs.
type lazyURLStore struct {
	dir   string
	store atomic.Pointer[videos.URLStore]
}

func (s *lazyURLStore) set(t *testing.T, base string) {
	st, err := videos.NewURLStore(s.dir, base)
	require.NoError(t, err)
	s.store.Store(st)
}

func (s *lazyURLStore) Put(ctx context.Context, p videos.PutParams) error {
	return s.store.Load().Put(ctx, p)
}

func (s *lazyURLStore) Open(ctx context.Context, id string, v videos.Variant) (*videos.Content, error) {
	return s.store.Load().Open(ctx, id, v)
}

func (s *lazyURLStore) Delete(ctx context.Context, id string) error {
	return s.store.Load().Delete(ctx, id)
}

// TestSDKSeesASubmittersRefusalAtOnce: a creation that the Submitter
// refuses (an upstream's 400) is the SDK's error on Videos.New, with its
// message and code; nothing is left to poll.
func TestSDKSeesASubmittersRefusalAtOnce(t *testing.T) {
	t.Parallel()
	sub := &fakeSubmitter{err: &apierrors.Error{Status: 400, Type: "invalid_request_error", Code: "invalid_value", Param: "size",
		Message: "Invalid value: '1280x720'. Supported values are: '720x1280'."}}
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithSubmitter(sub)}})
	client := sdkClient(b, keyAlice)
	_, err := client.Videos.New(t.Context(), demoParams("a kite"))
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	require.Equal(t, "invalid_value", apiErr.Code)
	require.Equal(t, "Invalid value: '1280x720'. Supported values are: '720x1280'.", apiErr.Message)
	require.Len(t, sub.tasks, 1, "the SDK's multipart request was submitted")
	require.Zero(t, b.store.Len())
}
