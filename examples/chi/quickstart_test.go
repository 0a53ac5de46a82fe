package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEQuickstartIsThisProgram: the Go block of the README's first
// section is newQuickstart's body, line for line (indentation aside).
func TestREADMEQuickstartIsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	src, err := os.ReadFile("quickstart.go")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(readme), "## Inside a service you already run\n")
	require.True(t, ok, "the README has the section")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```go\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok)
	want := lines(block)
	have := lines(string(src))
	found := false
	for i := 0; i+len(want) <= len(have) && !found; i++ {
		found = slicesEqual(have[i:i+len(want)], want)
	}
	require.True(t, found, "the README's first block is not in quickstart.go verbatim:\n%s", block)
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestQuickstartServes: the signed-in user gets the model's reply and is
// charged; the guardrail refuses; a request without a session is 401.
func TestQuickstartServes(t *testing.T) {
	h, err := newQuickstart(t.Context())
	require.NoError(t, err)
	post := func(session, prompt string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/v1/chat/completions",
			strings.NewReader(`{"model":"acme-llm","messages":[{"role":"user","content":"`+prompt+`"}]}`))
		r.Header.Set("Content-Type", "application/json")
		if session != "" {
			r.Header.Set("X-Session", session)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := post("sess-42", "Hello")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `"content":"Hello from Acme."`)
	w = post("sess-42", "Tell me about Project Nightingale")
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.JSONEq(t, `{"error":{"message":"This prompt names a confidential project.","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, w.Body.String())
	w = post("", "Hello")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	require.Contains(t, w.Body.String(), `"code":"missing_authorization"`)
}
