package videos_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
)

var createBody = map[string]any{"model": modelFirstKind, "prompt": "a fox", "size": "1280x720", "seconds": 8}

// requireContentError checks a content-download error: the status, the
// content shape {"error":{"message","type","code"}} and the golden file.
func requireContentError(t *testing.T, r reply, status int, name string) {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	m := r.json(t)
	require.Len(t, m, 1, "only error: %s", r.body)
	e := m["error"].(map[string]any)
	require.Len(t, e, 3, "message, type and code: %s", r.body)
	require.Equal(t, "invalid_request_error", e["type"])
	require.NotEmpty(t, e["code"], "a code, like every other error: %s", r.body)
	if name != "" {
		golden(t, name, r.body)
	}
}

func TestContentTableBytesInTheGateway(t *testing.T) {
	t.Parallel()
	for name, newStore := range map[string]func(t *testing.T) videos.ContentStore{
		"memory": func(*testing.T) videos.ContentStore { return videos.NewMemoryContentStore(nil) },
		"file": func(t *testing.T) videos.ContentStore {
			s, err := videos.NewFileStore(t.TempDir())
			require.NoError(t, err)
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, bundleOptions{contents: newStore(t)})
			id := b.create(t, keyAlice, createBody)
			b.complete(t, true)
			path := "/v1/videos/" + id + "/content"

			// 200, the video: type, length, file name.
			r := b.do(t, http.MethodGet, path, keyAlice, "", nil)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, "video/mp4", r.header.Get("Content-Type"))
			require.Equal(t, fmt.Sprint(len(fakeMP4)), r.header.Get("Content-Length"))
			require.Equal(t, `attachment; filename=`+id+`.mp4`, r.header.Get("Content-Disposition"))
			require.Equal(t, "bytes", r.header.Get("Accept-Ranges"))
			require.Equal(t, fakeMP4, string(r.body))
			require.Equal(t, fakeMP4, string(b.do(t, http.MethodGet, path+"?variant=video", keyAlice, "", nil).body))

			// 200, the thumbnail.
			r = b.do(t, http.MethodGet, path+"?variant=thumbnail", keyAlice, "", nil)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, "image/png", r.header.Get("Content-Type"))
			require.Equal(t, `attachment; filename=`+id+`_thumbnail.png`, r.header.Get("Content-Disposition"))
			require.Equal(t, pngImage, r.body)

			// Range.
			r = b.do(t, http.MethodGet, path, keyAlice, "", nil, "Range", "bytes=4-7")
			require.Equal(t, http.StatusPartialContent, r.status)
			require.Equal(t, fmt.Sprintf("bytes 4-7/%d", len(fakeMP4)), r.header.Get("Content-Range"))
			require.Equal(t, "ftyp", string(r.body))

			// HEAD.
			r = b.do(t, http.MethodHead, path, keyAlice, "", nil)
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, fmt.Sprint(len(fakeMP4)), r.header.Get("Content-Length"))
			require.Empty(t, r.body)

			// Conditional GET with the ETag.
			etag := r.header.Get("ETag")
			require.NotEmpty(t, etag)
			require.Equal(t, http.StatusNotModified, b.do(t, http.MethodGet, path, keyAlice, "", nil, "If-None-Match", etag).status)

			// The admin-console session of the account works too.
			r = b.do(t, http.MethodGet, path, "", "", nil, "Cookie", "console_session=alice")
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, fakeMP4, string(r.body))
			r = b.do(t, http.MethodGet, path, "", "", nil, "Cookie", "console_session=bob")
			requireContentError(t, r, http.StatusNotFound, "")
			r = b.do(t, http.MethodGet, path, "", "", nil)
			require.Equal(t, http.StatusUnauthorized, r.status)
			require.Equal(t, http.StatusUnauthorized, b.do(t, http.MethodGet, "/v1/videos/"+id, "", "", nil, "Cookie", "console_session=alice").status,
				"sessions are for the content route only")
		})
	}
}

func TestContentTableErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	step := func() { b.now = b.now.Add(time.Second) }

	running := b.create(t, keyAlice, createBody)
	step()
	failed := b.create(t, keyAlice, createBody)
	step()
	noThumb := b.create(t, keyAlice, createBody)
	step()
	gone := b.create(t, keyAlice, createBody)
	step()

	task := b.claim(t)
	require.Equal(t, running, task.ID)
	b.update(t, task, videos.UpdateParams{Progress: 30})
	task = b.claim(t)
	b.update(t, task, videos.UpdateParams{Fail: &videos.TaskError{Code: "generation_failed", Message: "no"}})
	require.Equal(t, noThumb, b.complete(t, false).ID)
	require.Equal(t, gone, b.complete(t, false).ID)
	require.NoError(t, b.contents.Delete(context.Background(), gone))
	queued := b.create(t, keyAlice, createBody)

	content := func(id, query string) reply {
		return b.do(t, http.MethodGet, "/v1/videos/"+id+"/content"+query, keyAlice, "", nil)
	}
	requireContentError(t, content(queued, ""), http.StatusBadRequest, "content_queued")
	requireContentError(t, content(running, ""), http.StatusBadRequest, "content_in_progress")
	requireContentError(t, content(failed, ""), http.StatusBadRequest, "content_failed")
	requireContentError(t, content(noThumb, "?variant=audio"), http.StatusBadRequest, "content_bad_variant")
	requireContentError(t, content("task_doesnotexist", ""), http.StatusNotFound, "content_not_found")
	requireContentError(t, content(noThumb, "?variant=thumbnail"), http.StatusNotFound, "content_no_thumbnail")
	requireContentError(t, content(gone, ""), http.StatusNotFound, "content_gone")
	require.Equal(t, http.StatusOK, content(noThumb, "").status)
	empty := content(noThumb, "?variant=")
	require.Equal(t, http.StatusOK, empty.status, "an empty variant is the video: %s", empty.body)
	require.Equal(t, "video/mp4", empty.header.Get("Content-Type"))

	r := b.do(t, http.MethodGet, "/v1/videos/"+noThumb+"/content", keyBob, "", nil)
	requireContentError(t, r, http.StatusNotFound, "")
	require.Contains(t, string(r.body), "No video task found", "another account's task is unknown")
	require.Contains(t, string(content(running, "").body), "in_progress", "the message names the status")
}

// cdn serves a directory as another origin would.
func cdn(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.StripPrefix("/media/", http.FileServer(http.Dir(dir))))
	t.Cleanup(s.Close)
	return s
}

func TestContentTableRedirectToObjectStorage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	origin := cdn(t, dir)
	store, err := videos.NewURLStore(dir, origin.URL+"/media")
	require.NoError(t, err)
	b := setup(t, bundleOptions{contents: store})
	id := b.create(t, keyAlice, createBody)
	b.complete(t, true)

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		r := b.do(t, method, "/v1/videos/"+id+"/content", keyAlice, "", nil)
		require.Equal(t, http.StatusMovedPermanently, r.status, method)
		require.Equal(t, origin.URL+"/media/"+id+"/video.mp4", r.header.Get("Location"))
		require.Equal(t, "no-store", r.header.Get("Cache-Control"))
		require.Empty(t, r.body, "no JSON body")
	}
	r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content?variant=thumbnail", keyAlice, "", nil)
	require.Equal(t, http.StatusMovedPermanently, r.status)
	require.Equal(t, origin.URL+"/media/"+id+"/thumbnail.png", r.header.Get("Location"))

	// The client follows the redirect.
	req, _ := http.NewRequest(http.MethodGet, b.server.URL+"/v1/videos/"+id+"/content", nil)
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Equal(t, "video/mp4", res.Header.Get("Content-Type"))
}

func TestContentProxyStreamsObjectStorage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	origin := cdn(t, dir)
	store, err := videos.NewURLStore(dir, origin.URL+"/media")
	require.NoError(t, err)
	b := setup(t, bundleOptions{contents: store, handler: []videos.Option{videos.WithContentProxy(nil)}})
	id := b.create(t, keyAlice, createBody)
	b.complete(t, true)
	path := "/v1/videos/" + id + "/content"

	r := b.do(t, http.MethodGet, path, keyAlice, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "video/mp4", r.header.Get("Content-Type"))
	require.Equal(t, fmt.Sprint(len(fakeMP4)), r.header.Get("Content-Length"))
	require.Equal(t, `attachment; filename=`+id+`.mp4`, r.header.Get("Content-Disposition"))
	require.Equal(t, fakeMP4, string(r.body))

	r = b.do(t, http.MethodGet, path, keyAlice, "", nil, "Range", "bytes=4-7")
	require.Equal(t, http.StatusPartialContent, r.status)
	require.Equal(t, "ftyp", string(r.body))
	require.Equal(t, fmt.Sprintf("bytes 4-7/%d", len(fakeMP4)), r.header.Get("Content-Range"))

	r = b.do(t, http.MethodHead, path, keyAlice, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, fmt.Sprint(len(fakeMP4)), r.header.Get("Content-Length"))
	require.Empty(t, r.body)

	r = b.do(t, http.MethodGet, path+"?variant=thumbnail", keyAlice, "", nil)
	require.Equal(t, "image/png", r.header.Get("Content-Type"))
	require.Equal(t, pngImage, r.body)
}

func TestContentAtAGeneratorsURL(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v.mp4":
			w.Header().Set("Content-Type", "video/mp4")
			http.ServeContent(w, r, "", time.Time{}, strings.NewReader(fakeMP4))
		case "/broken.mp4":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(upstream.Close)

	complete := func(t *testing.T, b *testBundle, url string) string {
		id := b.create(t, keyAlice, createBody)
		task := b.claim(t)
		b.update(t, task, videos.UpdateParams{Complete: &videos.Completion{Metadata: videos.Metadata{URL: url}}})
		return id
	}

	t.Run("redirect", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bundleOptions{})
		id := complete(t, b, upstream.URL+"/v.mp4")
		r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", keyAlice, "", nil)
		require.Equal(t, http.StatusMovedPermanently, r.status)
		require.Equal(t, upstream.URL+"/v.mp4", r.header.Get("Location"))
		status := b.do(t, http.MethodGet, "/v1/videos/"+id, keyAlice, "", nil).json(t)
		require.Equal(t, upstream.URL+"/v.mp4", status["metadata"].(map[string]any)["url"])
	})
	t.Run("proxy", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bundleOptions{handler: []videos.Option{videos.WithContentProxy(upstream.Client())}})
		id := complete(t, b, upstream.URL+"/v.mp4")
		r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", keyAlice, "", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, fakeMP4, string(r.body))

		b.now = b.now.Add(time.Second)
		id = complete(t, b, upstream.URL+"/missing.mp4")
		requireContentError(t, b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", keyAlice, "", nil), http.StatusNotFound, "content_proxy_gone")

		b.now = b.now.Add(time.Second)
		id = complete(t, b, upstream.URL+"/broken.mp4")
		r = b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", keyAlice, "", nil)
		require.Equal(t, http.StatusBadGateway, r.status)
		golden(t, "content_proxy_upstream_error", r.body)
	})
}
