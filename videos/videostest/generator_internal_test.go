package videostest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
)

func TestCheckResult(t *testing.T) {
	t.Parallel()
	mp4 := []byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00")
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	tests := []struct {
		name     string
		res      *videos.Result
		progress []int
		wantErr  string
	}{
		{"bytes and a thumbnail", &videos.Result{Video: videos.Media{ContentType: "video/mp4", Data: mp4},
			Thumbnail: &videos.Media{ContentType: "image/png", Data: png}}, []int{0, 50, 100}, ""},
		{"a URL", &videos.Result{Video: videos.Media{ContentType: "video/mp4", URL: "https://cdn.example/v.mp4"}}, nil, ""},
		{"no result", nil, nil, "nil Result"},
		{"progress beyond 100", &videos.Result{Video: videos.Media{ContentType: "video/mp4", Data: mp4}}, []int{50, 120}, "progress 120"},
		{"no video", &videos.Result{Video: videos.Media{ContentType: "video/mp4"}}, nil, "neither bytes nor a URL"},
		{"bytes and a URL", &videos.Result{Video: videos.Media{ContentType: "video/mp4", Data: mp4, URL: "https://cdn.example/v.mp4"}}, nil, "both bytes and a URL"},
		{"not a video type", &videos.Result{Video: videos.Media{ContentType: "application/octet-stream", Data: mp4}}, nil, `content type "application/octet-stream"`},
		{"mp4 that is not", &videos.Result{Video: videos.Media{ContentType: "video/mp4", Data: png}}, nil, "ftyp box"},
		{"a thumbnail that is not a PNG", &videos.Result{Video: videos.Media{ContentType: "video/mp4", Data: mp4},
			Thumbnail: &videos.Media{ContentType: "image/png", Data: []byte("GIF89a......")}}, nil, "but its bytes are image/gif"},
		{"a GIF thumbnail", &videos.Result{Video: videos.Media{ContentType: "video/mp4", Data: mp4},
			Thumbnail: &videos.Media{ContentType: "image/gif", URL: "https://cdn.example/t.gif"}}, nil, "want image/png or image/jpeg"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkResult(tc.res, tc.progress)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}
