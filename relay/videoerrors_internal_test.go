package relay

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVideoScrubText(t *testing.T) {
	t.Parallel()
	s := newVideoScrub(&Upstream{BaseURL: "https://gpu-farm.example.net/v1"}, "video_abc123", "task_XYZ")
	tests := []struct{ in, want string }{
		{"Video with id 'video_abc123' not found.", "Video with id 'task_XYZ' not found."},
		{"Invalid value: '5'. Supported values are: '4', '8', '12'.", "Invalid value: '5'. Supported values are: '4', '8', '12'."},
		{`mode "video_edit" is not enabled`, `mode "video_edit" is not enabled`},
		{"Incorrect API key provided: sk-proj-abcdEFGH1234.", "Incorrect API key provided: [redacted]."},
		{"sent Authorization: Bearer abc.def-ghi", "sent Authorization: Bearer [redacted]"},
		{"bad request to /v1/videos?key=AIzaSyA123 (x-api-key: secret9)", "bad request to /v1/videos?key=[redacted] (x-api-key: [redacted])"},
		{"fetch http://10.0.0.7:8000/render/1 failed", "fetch [redacted] failed"},
		{"worker 10.1.2.3:8443 down", "worker [redacted] down"},
		{"worker gpu-7.cluster.internal is down, see localhost:9000", "worker [redacted] is down, see [redacted]"},
		{"GPU-FARM.example.net is overloaded", "[redacted] is overloaded"},
		{"The prompt was rejected.", "The prompt was rejected."},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, s.text(tc.in), tc.in)
	}
	require.Equal(t, "content_policy", s.code("content_policy"))
	require.Empty(t, s.code("task video_abc123 failed"))
	require.Empty(t, s.code("sk-abcdefgh1234"))
}

func TestPercent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   any
		want int
		ok   bool
	}{
		{float64(42), 42, true}, {42.7, 42, true}, {"45", 45, true}, {"45.5%", 45, true},
		{float64(140), 100, true}, {float64(-3), 0, true}, {"soon", 0, false}, {nil, 0, false}, {true, 0, false},
	} {
		got, ok := percent(tc.in)
		require.Equal(t, tc.ok, ok, "%v", tc.in)
		require.Equal(t, tc.want, got, "%v", tc.in)
	}
}
