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

// contentKinds are the ways the content endpoint serves bytes: from each
// store that serves them (http.ServeContent), and streamed from the URL
// of a store that hands out URLs (WithContentProxy).
var contentKinds = []struct {
	name  string
	setup func(t *testing.T) *testBundle
}{
	{"memory", func(t *testing.T) *testBundle { return setup(t, bundleOptions{}) }},
	{"file", func(t *testing.T) *testBundle {
		s, err := videos.NewFileStore(t.TempDir())
		require.NoError(t, err)
		return setup(t, bundleOptions{contents: s})
	}},
	{"proxy", func(t *testing.T) *testBundle {
		dir := t.TempDir()
		s, err := videos.NewURLStore(dir, cdn(t, dir).URL+"/media")
		require.NoError(t, err)
		return setup(t, bundleOptions{contents: s, handler: []videos.Option{videos.WithContentProxy(nil)}})
	}},
}

// TestContentRangeAndPreconditionFailuresAreJSON: the 416 and 412 of
// http.ServeContent (and of an origin the gateway streams from) come in
// the content-download shape; the 416 keeps Content-Range.
func TestContentRangeAndPreconditionFailuresAreJSON(t *testing.T) {
	t.Parallel()
	for _, kind := range contentKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			b := kind.setup(t)
			id := b.create(t, keyAlice, createBody)
			b.complete(t, true)
			path := "/v1/videos/" + id + "/content"
			cases := []struct {
				name, query string
				header      []string
				status      int
				golden      string
			}{
				{"range after the end", "", []string{"Range", "bytes=999999-"}, http.StatusRequestedRangeNotSatisfiable, "content_range_not_satisfiable"},
				{"range of the thumbnail", "?variant=thumbnail", []string{"Range", "bytes=999999-"}, http.StatusRequestedRangeNotSatisfiable, "content_range_not_satisfiable_thumbnail"},
				{"if-match another tag", "", []string{"If-Match", `"x"`}, http.StatusPreconditionFailed, "content_precondition_failed"},
				{"unmodified since long ago", "", []string{"If-Unmodified-Since", "Mon, 02 Jan 2006 15:04:05 GMT"}, http.StatusPreconditionFailed, "content_precondition_failed"},
			}
			for _, tc := range cases {
				r := b.do(t, http.MethodGet, path+tc.query, keyAlice, "", nil, tc.header...)
				require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
				require.Equal(t, "application/json", r.header.Get("Content-Type"), tc.name)
				require.Empty(t, r.header.Get("Content-Disposition"), "%s: an error is not a file", tc.name)
				require.Empty(t, r.header.Get("ETag"), tc.name)
				requireContentError(t, r, tc.status, tc.golden)
				if tc.status == http.StatusRequestedRangeNotSatisfiable {
					size := len(fakeMP4)
					if tc.query != "" {
						size = len(pngImage)
					}
					require.Equal(t, fmt.Sprintf("bytes */%d", size), r.header.Get("Content-Range"), tc.name)
				}
			}
			// HEAD: the same status, no body.
			r := b.do(t, http.MethodHead, path, keyAlice, "", nil, "Range", "bytes=999999-")
			require.Equal(t, http.StatusRequestedRangeNotSatisfiable, r.status)
			require.Empty(t, r.body)
			// The ranges and conditions that hold still work.
			r = b.do(t, http.MethodGet, path, keyAlice, "", nil, "Range", "bytes=4-7")
			require.Equal(t, http.StatusPartialContent, r.status)
			require.Equal(t, "ftyp", string(r.body))
		})
	}
}

// TestContentVariantGivenTwiceIsRefused: a repeated variant is a 400
// that names its values, whichever they are.
func TestContentVariantGivenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	id := b.create(t, keyAlice, createBody)
	b.complete(t, true)
	path := "/v1/videos/" + id + "/content"
	for _, tc := range []struct{ query, golden, names string }{
		{"?variant=thumbnail&variant=foo", "content_variant_repeated", `"thumbnail", "foo"`},
		{"?variant=video&variant=video", "", `"video", "video"`},
		{"?variant=thumbnail&variant=", "", `"thumbnail", ""`},
	} {
		r := b.do(t, http.MethodGet, path+tc.query, keyAlice, "", nil)
		requireContentError(t, r, http.StatusBadRequest, tc.golden)
		require.Contains(t, r.json(t)["error"].(map[string]any)["message"], tc.names, tc.query)
	}
}

// TestContentRepliesABrowserCannotRun: content is sent as a media type a
// video or thumbnail may have, or else as application/octet-stream for
// download; never sniffed, sandboxed, and never reused by a browser
// without asking the gateway with the credentials it has then.
func TestContentRepliesABrowserCannotRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		variant     videos.Variant
		stored      string
		wantType    string
		disposition string // with ID for the task id
	}{
		{"mp4", videos.VariantVideo, "video/mp4", "video/mp4", "attachment; filename=ID.mp4"},
		{"mp4 upper case", videos.VariantVideo, "Video/MP4", "video/mp4", "attachment; filename=ID.mp4"},
		{"webm", videos.VariantVideo, "video/webm", "video/webm", "attachment; filename=ID.webm"},
		{"html", videos.VariantVideo, "text/html; charset=utf-8", "application/octet-stream", "attachment; filename=ID.bin"},
		{"quicktime", videos.VariantVideo, "video/quicktime", "application/octet-stream", "attachment; filename=ID.mov"},
		{"bad parameters", videos.VariantVideo, "video/mp4;;", "video/mp4", "attachment; filename=ID.mp4"},
		{"no subtype", videos.VariantVideo, "video", "application/octet-stream", "attachment; filename=ID.bin"},
		{"png thumbnail", videos.VariantThumbnail, "image/png", "image/png", "attachment; filename=ID_thumbnail.png"},
		{"jpeg thumbnail", videos.VariantThumbnail, "image/jpeg", "image/jpeg", "attachment; filename=ID_thumbnail.jpg"},
		{"webp thumbnail", videos.VariantThumbnail, "image/webp", "image/webp", "attachment; filename=ID_thumbnail.webp"},
		{"svg thumbnail", videos.VariantThumbnail, "image/svg+xml", "application/octet-stream", "attachment; filename=ID_thumbnail.bin"},
		{"gif thumbnail", videos.VariantThumbnail, "image/gif", "application/octet-stream", "attachment; filename=ID_thumbnail.gif"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, bundleOptions{})
			id := b.create(t, keyAlice, createBody)
			task := b.claim(t)
			data := []byte(`<script>parent.stolen = sessionStorage.getItem("gatewaykit.key")</script>`)
			require.NoError(t, b.contents.Put(context.Background(), videos.PutParams{TaskID: id, Variant: tc.variant, ContentType: tc.stored, Data: data}))
			b.update(t, task, videos.UpdateParams{Complete: &videos.Completion{HasThumbnail: tc.variant == videos.VariantThumbnail}})
			for _, rng := range []string{"", "bytes=0-7"} {
				var header []string
				if rng != "" {
					header = []string{"Range", rng}
				}
				r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content?variant="+string(tc.variant), keyAlice, "", nil, header...)
				require.Contains(t, []int{http.StatusOK, http.StatusPartialContent}, r.status, string(r.body))
				requireMediaHeaders(t, r.header, tc.wantType, strings.ReplaceAll(tc.disposition, "ID", id))
			}
		})
	}
}

// requireMediaHeaders checks the headers of a content reply.
func requireMediaHeaders(t *testing.T, h http.Header, contentType, disposition string) {
	t.Helper()
	require.Equal(t, contentType, h.Get("Content-Type"))
	require.Equal(t, disposition, h.Get("Content-Disposition"))
	require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	require.Equal(t, "sandbox", h.Get("Content-Security-Policy"))
	require.Equal(t, "private, no-cache", h.Get("Cache-Control"), "a browser asks again, with its credentials of the moment")
}

// TestContentHeadersOfEveryKind: every way of serving bytes sends the
// same headers, and a cached copy is only reused after the gateway has
// seen the credentials again (304 with them, 401 without).
func TestContentHeadersOfEveryKind(t *testing.T) {
	t.Parallel()
	for _, kind := range contentKinds {
		t.Run(kind.name, func(t *testing.T) {
			t.Parallel()
			b := kind.setup(t)
			id := b.create(t, keyAlice, createBody)
			b.complete(t, true)
			path := "/v1/videos/" + id + "/content"
			r := b.do(t, http.MethodGet, path, keyAlice, "", nil)
			require.Equal(t, http.StatusOK, r.status)
			requireMediaHeaders(t, r.header, "video/mp4", "attachment; filename="+id+".mp4")
			r = b.do(t, http.MethodGet, path+"?variant=thumbnail", keyAlice, "", nil)
			requireMediaHeaders(t, r.header, "image/png", "attachment; filename="+id+"_thumbnail.png")

			validator := []string{"If-Modified-Since", r.header.Get("Last-Modified")}
			if etag := r.header.Get("ETag"); etag != "" {
				validator = []string{"If-None-Match", etag}
			}
			require.NotEmpty(t, validator[1], "a validator to revalidate with")
			require.Equal(t, http.StatusNotModified, b.do(t, http.MethodGet, path+"?variant=thumbnail", keyAlice, "", nil, validator...).status)
			require.Equal(t, http.StatusUnauthorized, b.do(t, http.MethodGet, path+"?variant=thumbnail", "", "", nil, validator...).status)
			require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, path+"?variant=thumbnail", keyBob, "", nil, validator...).status)
		})
	}
}

// TestContentStreamedFromAURLIsTypedAsMedia: the type an origin sends is
// checked like a stored one.
func TestContentStreamedFromAURLIsTypedAsMedia(t *testing.T) {
	t.Parallel()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html")
		case "/drawing":
			w.Header().Set("Content-Type", "image/svg+xml")
		case "/untyped":
			w.Header()["Content-Type"] = nil
		}
		w.Header().Set("Content-Security-Policy", "script-src *")
		w.Header().Set("Cache-Control", "public, max-age=31536000")
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`))
	}))
	t.Cleanup(origin.Close)
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithContentProxy(origin.Client())}})
	for _, p := range []string{"/page", "/drawing", "/untyped"} {
		b.now = b.now.Add(time.Second)
		id := b.create(t, keyAlice, createBody)
		task := b.claim(t)
		b.update(t, task, videos.UpdateParams{Complete: &videos.Completion{Metadata: videos.Metadata{URL: origin.URL + p}}})
		r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", keyAlice, "", nil)
		require.Equal(t, http.StatusOK, r.status, p)
		requireMediaHeaders(t, r.header, "application/octet-stream", "attachment; filename="+id+".bin")
	}
}

// TestContentURLsThatAreNotHTTPAreRefused: a result's URL is redirected
// to (or streamed from) only if it is an absolute http or https URL;
// anything else is a 502, whatever the generator or store handed over.
func TestContentURLsThatAreNotHTTPAreRefused(t *testing.T) {
	t.Parallel()
	for _, proxy := range []bool{false, true} {
		t.Run(fmt.Sprint("proxy=", proxy), func(t *testing.T) {
			t.Parallel()
			var opts []videos.Option
			if proxy {
				opts = append(opts, videos.WithContentProxy(nil))
			}
			b := setup(t, bundleOptions{handler: opts})
			for _, u := range []string{
				"javascript:alert(document.domain)",
				"JavaScript:alert(1)",
				"data:text/html,<script>alert(1)</script>",
				"file:///etc/passwd",
				"ftp://files.example.com/v.mp4",
				"//cdn.example.com/v.mp4",
				"/v1/videos/other/content",
				"https:///no-host",
			} {
				b.now = b.now.Add(time.Second)
				id := b.create(t, keyAlice, createBody)
				task := b.claim(t)
				b.update(t, task, videos.UpdateParams{Complete: &videos.Completion{Metadata: videos.Metadata{URL: u}}})
				r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", keyAlice, "", nil)
				require.Equal(t, http.StatusBadGateway, r.status, "%s: %s", u, r.body)
				require.Empty(t, r.header.Get("Location"), u)
				require.Equal(t, "application/json", r.header.Get("Content-Type"), u)
				golden(t, "content_url_not_http", r.body)
			}
		})
	}
}
