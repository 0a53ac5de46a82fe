package mediareply_test

import (
	"net/http"
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
