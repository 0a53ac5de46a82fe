package relay_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/videos"
)

// TestVideoContentOfAHostileUpstreamIsNoPage: an upstream that answers
// its content as text/html, and its thumbnail as image/svg+xml, with a
// script: the gateway keeps them as application/octet-stream and serves
// them for download only, never sniffed, sandboxed.
func TestVideoContentOfAHostileUpstreamIsNoPage(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-script","prompt":"x"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	for _, tc := range []struct{ query, disposition, body string }{
		{"", "attachment; filename=" + id + ".bin", relaytest.ScriptPage},
		{"?variant=thumbnail", "attachment; filename=" + id + "_thumbnail.bin", relaytest.ScriptSVG},
	} {
		res := g.get(t, "/v1/videos/"+id+"/content"+tc.query)
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, "application/octet-stream", res.Header.Get("Content-Type"))
		require.Equal(t, tc.disposition, res.Header.Get("Content-Disposition"))
		require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		require.Equal(t, "sandbox", res.Header.Get("Content-Security-Policy"))
		require.Equal(t, tc.body, string(b), "the bytes are the upstream's, for download")
	}

	// What the relay hands the runner is typed already, whatever the
	// content store will do with it.
	task := &videos.Task{ID: videos.NewID(), Model: "pub-video-script", Request: videos.Request{Create: &videos.CreateRequest{Model: "pub-video-script", Prompt: "x"}}}
	res, err := g.relay.Videos().Generate(t.Context(), task, func(int) {})
	require.NoError(t, err)
	require.Equal(t, "application/octet-stream", res.Video.ContentType)
	require.Equal(t, "application/octet-stream", res.Thumbnail.ContentType)
}

// TestVideoContentTypesOfTheUpstream: video and image types that a
// browser does not run are kept (the declared type, or the type the
// bytes sniff as), anything else is application/octet-stream.
func TestVideoContentTypesOfTheUpstream(t *testing.T) {
	t.Parallel()
	const mp4 = "\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
	cases := []struct {
		name, declared, data, want string
	}{
		{"mp4", "video/mp4", mp4, "video/mp4"},
		{"webm with codecs", `video/webm; codecs="vp9"`, "\x1a\x45\xdf\xa3 webm", "video/webm; codecs=vp9"},
		{"octet-stream sniffed", "application/octet-stream", mp4, "video/mp4"},
		{"none sniffed", "", mp4, "video/mp4"},
		{"html that sniffs as mp4", "text/html", mp4, "video/mp4"},
		{"quicktime, which the file stores keep", "video/quicktime", "\x00\x00\x00\x14ftypqt  ", "video/quicktime"},
		{"gif", "image/gif", "GIF89a", "image/gif"},
		{"svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"/>`, "application/octet-stream"},
		{"html", "text/html", "<html><script>alert(1)</script>", "application/octet-stream"},
		{"xhtml", "application/xhtml+xml", "<html xmlns='http://www.w3.org/1999/xhtml'/>", "application/octet-stream"},
		{"plain text", "text/plain", "hello", "application/octet-stream"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := videoUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.declared == "" {
					w.Header()["Content-Type"] = nil
				} else {
					w.Header().Set("Content-Type", tc.declared)
				}
				io.WriteString(w, tc.data)
			})
			r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1"}}}}, relay.WithPollInterval(time.Millisecond))
			require.NoError(t, err)
			res, err := r.Videos().Generate(t.Context(), videoTask(), func(int) {})
			require.NoError(t, err)
			require.Equal(t, tc.want, res.Video.ContentType)
			require.Equal(t, tc.data, string(res.Video.Data))
		})
	}
}

// TestVideoContentRedirectsOnlyToWebURLs: an upstream's redirect is
// handed to clients only to an https URL, or an http one from an upstream
// configured at an http base URL; anything else fails the task with
// bad_gateway, and nothing of the location reaches the client.
func TestVideoContentRedirectsOnlyToWebURLs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		tls      bool
		location string
		ok       bool
	}{
		{"https from https", true, "https://cdn.example.com/v.mp4?sig=1", true},
		{"https from http", false, "https://cdn.example.com/v.mp4", true},
		{"http from http", false, "http://cdn.example.com/v.mp4", true},
		{"relative from http", false, "/cdn/v.mp4", true},
		{"http from https", true, "http://cdn.example.com/v.mp4", false},
		{"javascript", false, "javascript:alert(document.domain)", false},
		{"javascript in capitals", true, "JAVASCRIPT:alert(1)", false},
		{"data", false, "data:text/html,<script>alert(1)</script>", false},
		{"file", false, "file:///etc/passwd", false},
		{"ftp", false, "ftp://cdn.example.com/v.mp4", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			content := func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Location", tc.location)
				w.WriteHeader(http.StatusFound)
			}
			var up *httptest.Server
			if tc.tls {
				up = httptest.NewTLSServer(videoMux(content))
			} else {
				up = httptest.NewServer(videoMux(content))
			}
			t.Cleanup(up.Close)
			r, err := relay.New([]relay.Route{{Model: "m", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1"}}}},
				relay.WithTransport(up.Client().Transport), relay.WithPollInterval(time.Millisecond))
			require.NoError(t, err)
			res, err := r.Videos().Generate(t.Context(), videoTask(), func(int) {})
			if tc.ok {
				require.NoError(t, err)
				want := tc.location
				if want[0] == '/' {
					want = up.URL + want
				}
				require.Equal(t, want, res.Video.URL)
				return
			}
			var f *videos.Failure
			require.ErrorAs(t, err, &f)
			require.Equal(t, "bad_gateway", f.Code)
			require.Equal(t, "The upstream redirected the video to a location that the gateway does not pass on.", f.Message)
			require.Nil(t, res)
		})
	}

	// End to end: the task fails, and the content endpoint redirects
	// nowhere.
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-video-redirect-script","prompt":"x"}`)
	v := g.waitVideo(t, id)
	require.Equal(t, "failed", v["status"])
	require.Equal(t, "bad_gateway", v["error"].(map[string]any)["code"])
	res := g.get(t, "/v1/videos/"+id+"/content")
	require.Equal(t, http.StatusBadRequest, res.StatusCode, "a failed task has no content")
	require.Empty(t, res.Header.Get("Location"))
}

// videoTask is a task of model "m" not yet created upstream.
func videoTask() *videos.Task {
	return &videos.Task{ID: videos.NewID(), Model: "m", Request: videos.Request{Create: &videos.CreateRequest{Model: "m", Prompt: "x"}}}
}

// videoUpstream is an upstream whose one video task completes at once
// and whose content (and thumbnail) content answers.
func videoUpstream(t *testing.T, content http.HandlerFunc) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(videoMux(content))
	t.Cleanup(up.Close)
	return up
}

func videoMux(content http.HandlerFunc) *http.ServeMux {
	mux := http.NewServeMux()
	task := func(w http.ResponseWriter, status string) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "video_1", "object": "video", "status": status, "progress": 100})
	}
	mux.HandleFunc("POST /v1/videos", func(w http.ResponseWriter, r *http.Request) { task(w, "queued") })
	mux.HandleFunc("GET /v1/videos/video_1", func(w http.ResponseWriter, r *http.Request) { task(w, "completed") })
	mux.HandleFunc("GET /v1/videos/video_1/content", content)
	return mux
}

// TestVideoContentErrorsOfARelayedTask: the content endpoint's 416, 412
// and repeated variant come in the content-download shape for a relayed
// task too.
func TestVideoContentErrorsOfARelayedTask(t *testing.T) {
	t.Parallel()
	g := newGateway(t, nil)
	id := g.createVideo(t, "/v1/videos", `{"model":"pub-ok","prompt":"x"}`)
	require.Equal(t, "completed", g.waitVideo(t, id)["status"])
	path := "/v1/videos/" + id + "/content"
	for _, tc := range []struct {
		name, query string
		header      []string
		status      int
		code        string
	}{
		{"range after the end", "", []string{"Range", "bytes=999999-"}, http.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable"},
		{"if-match another tag", "", []string{"If-Match", `"x"`}, http.StatusPreconditionFailed, "precondition_failed"},
		{"variant twice", "?variant=thumbnail&variant=foo", nil, http.StatusBadRequest, "invalid_request_error"},
	} {
		res := g.get(t, path+tc.query, tc.header...)
		require.Equal(t, tc.status, res.StatusCode, tc.name)
		require.Equal(t, "application/json", res.Header.Get("Content-Type"), tc.name)
		var body struct {
			Error map[string]string `json:"error"`
		}
		require.NoError(t, json.NewDecoder(res.Body).Decode(&body), tc.name)
		require.Equal(t, tc.code, body.Error["code"], tc.name)
		require.Equal(t, "invalid_request_error", body.Error["type"], tc.name)
		require.NotEmpty(t, body.Error["message"], tc.name)
		if tc.status == http.StatusRequestedRangeNotSatisfiable {
			require.Equal(t, "bytes */"+strconv.Itoa(len(relaytest.VideoContent)), res.Header.Get("Content-Range"))
		}
	}
}
