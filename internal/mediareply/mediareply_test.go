package mediareply_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/mediareply"
)

func TestTypesSet(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		types       mediareply.Types
		contentType string
		disposition string // set before
		want        http.Header
		ok          bool
	}{
		{"video", mediareply.Video, "video/mp4", "", http.Header{"Content-Type": {"video/mp4"}}, true},
		{"upper case", mediareply.Video, "Video/WebM", "", http.Header{"Content-Type": {"video/webm"}}, true},
		{"parameters kept", mediareply.Video, `video/mp4; codecs="avc1.42E01E"`, "", http.Header{"Content-Type": {`video/mp4; codecs=avc1.42E01E`}}, true},
		{"bad parameters dropped", mediareply.Audio, "audio/wav;;", "", http.Header{"Content-Type": {"audio/wav"}}, true},
		{"html", mediareply.Video, "text/html; charset=utf-8", "", http.Header{
			"Content-Type": {"application/octet-stream"}, "Content-Disposition": {"attachment"}}, false},
		{"svg keeps the file name", mediareply.Image, "image/svg+xml", `inline; filename="a.svg"`, http.Header{
			"Content-Type": {"application/octet-stream"}, "Content-Disposition": {"attachment; filename=a.svg"}}, false},
		{"a type of another kind", mediareply.Audio, "image/png", "", http.Header{
			"Content-Type": {"application/octet-stream"}, "Content-Disposition": {"attachment"}}, false},
		{"empty", mediareply.Image, "", "", http.Header{
			"Content-Type": {"application/octet-stream"}, "Content-Disposition": {"attachment"}}, false},
		{"allowed keeps a disposition", mediareply.Image, "image/png", `inline; filename="a.png"`, http.Header{
			"Content-Type": {"image/png"}, "Content-Disposition": {`inline; filename="a.png"`}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			if tc.disposition != "" {
				h.Set("Content-Disposition", tc.disposition)
			}
			require.Equal(t, tc.ok, tc.types.Set(h, tc.contentType))
			tc.want.Set("X-Content-Type-Options", "nosniff")
			tc.want.Set("Content-Security-Policy", "sandbox")
			if diff := cmp.Diff(tc.want, h); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTypesWrite(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n rest of the file")
	cases := []struct {
		name        string
		contentType string
		head        bool
		wantType    string
		wantBody    string
	}{
		{"Given", "image/webp", false, "image/webp", string(png)},
		{"Sniffed", "", false, "image/png", string(png)},
		{"HeadLeavesTheBodyOut", "", true, "image/png", ""},
		{"NotAnImage", "text/html", false, mediareply.OctetStream, string(png)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			rec.Header().Set("Cache-Control", "private")
			mediareply.Image.Write(rec, tc.contentType, png, tc.head)
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, tc.wantType, rec.Header().Get("Content-Type"))
			require.Equal(t, strconv.Itoa(len(png)), rec.Header().Get("Content-Length"))
			require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			require.Equal(t, "private", rec.Header().Get("Cache-Control"), "the caller's headers stay")
			require.Equal(t, tc.wantBody, rec.Body.String())
		})
	}
}
