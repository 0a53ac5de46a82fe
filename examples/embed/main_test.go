package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMESnippetsAreThisProgram: every Go snippet of the README's
// "Embed it in your router" is in main.go, line for line (indentation
// aside), so that it compiles, but the last, which is in
// examples/chi/main.go; the tests below run this program, and those of
// examples/chi that one.
func TestREADMESnippetsAreThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("main.go")
	require.NoError(t, err)
	chiSrc, err := os.ReadFile("../chi/main.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## Embed it in your router\n")
	require.True(t, ok, "the README has the section")
	section, _, _ = strings.Cut(section, "\n## ")

	program, chiProgram := trimmedLines(string(src)), trimmedLines(string(chiSrc))
	snippets := 0
	for {
		var block string
		_, rest, ok := strings.Cut(section, "```go\n")
		if !ok {
			break
		}
		block, section, ok = strings.Cut(rest, "```\n")
		require.True(t, ok, "an unterminated snippet")
		snippets++
		if snippets == 4 {
			require.True(t, containsRun(chiProgram, trimmedLines(block)), "not in ../chi/main.go verbatim:\n%s", block)
			continue
		}
		require.True(t, containsRun(program, trimmedLines(block)), "not in main.go verbatim:\n%s", block)
	}
	require.Equal(t, 4, snippets)
}

func trimmedLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// containsRun reports whether want occurs in have as consecutive lines.
func containsRun(have, want []string) bool {
	for i := 0; i+len(want) <= len(have); i++ {
		match := true
		for j := range want {
			if have[i+j] != want[j] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func post(t *testing.T, h http.Handler, path, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer sk-team-a-example")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// TestSnippetsServe runs both snippets with the README's calls: the
// walk-through's chat and completions models (demo-instruct is among
// demo.TextModels) and, on the whole gateway, a video task.
func TestSnippetsServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	h, err := newHandler(ctx)
	require.NoError(t, err)
	g, err := newGateway(ctx)
	require.NoError(t, err)
	tests := []struct {
		name    string
		handler http.Handler
		path    string
		body    string
		want    string
	}{
		{"chat", h, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hello"}]}`, `"chat.completion"`},
		{"completions", h, "/v1/completions", `{"model":"demo-instruct","prompt":"Once upon a time","max_tokens":8}`, `"text_completion"`},
		{"gateway chat", g, "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hello"}]}`, `"chat.completion"`},
		{"gateway responses", g, "/v1/responses", `{"model":"demo-chat","input":"hello"}`, `"object":"response"`},
		{"gateway video", g, "/v1/videos", `{"model":"demo-video","prompt":"a red kite","seconds":"4","size":"1280x720"}`, `"queued"`},
	}
	for _, tc := range tests {
		status, body := post(t, tc.handler, tc.path, tc.body)
		require.Equal(t, http.StatusOK, status, "%s: %s", tc.name, body)
		require.Contains(t, body, tc.want, tc.name)
	}
	require.NoError(t, g.Shutdown(ctx))
}
