package relay_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAccessRepliesAreNeverPages: what an upstream answers on an access
// point reaches the client as JSON, audio, an image or plain text, or
// else as application/octet-stream for download; never sniffed, and
// sandboxed, so that an upstream cannot serve a page on the gateway's
// origin.
func TestAccessRepliesAreNeverPages(t *testing.T) {
	t.Parallel()
	const page = `<!doctype html><script>alert(document.domain)</script>`
	cases := []struct {
		name, declared, disposition string
		wantType, wantDisposition   string
	}{
		{"mp3", "audio/mpeg", "", "audio/mpeg", ""},
		{"wav", "audio/wav", `inline; filename="speech.wav"`, "audio/wav", `inline; filename="speech.wav"`},
		{"json", "application/json", "", "application/json", ""},
		{"problem json", "application/problem+json", "", "application/problem+json", ""},
		{"plain text", "text/plain; charset=utf-8", "", "text/plain; charset=utf-8", ""},
		{"subtitles", "text/vtt", "", "text/vtt", ""},
		{"html", "text/html; charset=utf-8", "", "application/octet-stream", "attachment"},
		{"html named inline", "text/html", `inline; filename="a.html"`, "application/octet-stream", "attachment; filename=a.html"},
		{"svg", "image/svg+xml", "", "application/octet-stream", "attachment"},
		{"xml", "application/xml", "", "application/octet-stream", "attachment"},
		{"untyped", "", "", "application/octet-stream", "attachment"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := newFakeUpstream(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.declared == "" {
					w.Header()["Content-Type"] = nil
				} else {
					w.Header().Set("Content-Type", tc.declared)
				}
				if tc.disposition != "" {
					w.Header().Set("Content-Disposition", tc.disposition)
				}
				io.WriteString(w, page)
			})
			g := newAccessGateway(t, up)
			res := g.post(t, "/v1/audio/speech", "application/json", strings.NewReader(`{"model":"embed-1","input":"hi","voice":"alloy"}`),
				map[string]string{"Authorization": "Bearer " + keyOK})
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.Equal(t, tc.wantType, res.Header.Get("Content-Type"))
			require.Equal(t, tc.wantDisposition, res.Header.Get("Content-Disposition"))
			require.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
			require.Equal(t, "sandbox", res.Header.Get("Content-Security-Policy"))
			require.Equal(t, page, string(readAll(t, res.Body)), "the bytes pass unchanged")
		})
	}
}
