package gateway_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// TestErrorsDoNotEchoHugeValues reproduces an error body that grew with
// its input: a 1 MB number in max_tokens came back whole in a 1 000 151
// byte body. Every family's errors now quote at most apierrors.MaxEcho
// bytes of what the client sent.
func TestErrorsDoNotEchoHugeValues(t *testing.T) {
	t.Parallel()
	g := newDemo(t, nil)
	big := strings.Repeat("9", 1<<20)
	tests := []struct {
		name, method, path, body string
		status                   int
	}{
		{"ChatNumber", "POST", "/v1/chat/completions", `{"model":"demo-chat","max_tokens":` + big + `,"messages":[{"role":"user","content":"hi"}]}`, 400},
		{"ChatFloat", "POST", "/v1/chat/completions", `{"model":"demo-chat","temperature":` + big + `,"messages":[{"role":"user","content":"hi"}]}`, 400},
		{"ChatToolChoice", "POST", "/v1/chat/completions", `{"model":"demo-chat","tool_choice":"` + big + `","messages":[{"role":"user","content":"hi"}]}`, 400},
		{"ChatModel", "POST", "/v1/chat/completions", `{"model":"` + big + `","messages":[{"role":"user","content":"hi"}]}`, 404},
		{"Completions", "POST", "/v1/completions", `{"model":"demo-instruct","max_tokens":` + big + `,"prompt":"hi"}`, 400},
		{"Responses", "POST", "/v1/responses", `{"model":"demo-chat","max_output_tokens":` + big + `,"input":"hi"}`, 400},
		{"ResponsesRole", "POST", "/v1/responses", `{"model":"demo-chat","input":[{"role":"` + big + `","content":"hi"}]}`, 400},
		{"Messages", "POST", "/v1/messages", `{"model":"demo-chat","max_tokens":` + big + `,"messages":[{"role":"user","content":"hi"}]}`, 400},
		{"MessagesRole", "POST", "/v1/messages", `{"model":"demo-chat","max_tokens":5,"messages":[{"role":"` + big + `","content":"hi"}]}`, 400},
		{"Gemini", "POST", "/v1beta/models/demo-chat:generateContent", `{"generationConfig":{"maxOutputTokens":` + big + `},"contents":[{"parts":[{"text":"hi"}]}]}`, 400},
		{"VideosNumber", "POST", "/v1/videos", `{"model":"demo-video","prompt":"a kite","size":"1280x720","seconds":` + big + `}`, 400},
		{"VideosString", "POST", "/v1/videos", `{"model":"demo-video","prompt":"a kite","size":"` + big + `"}`, 400},
		{"UnknownPath", "GET", "/v1/" + big, "", 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			req.Header.Set("Authorization", "Bearer sk-demo")
			req.Header.Set("x-api-key", "sk-demo")
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			g.ServeHTTP(rec, req)
			require.Equal(t, tc.status, rec.Code, "%.300s", rec.Body.String())
			require.Less(t, rec.Body.Len(), 1024, "%.300s", rec.Body.String())
			require.Contains(t, rec.Body.String(), big[:apierrors.MaxEcho/2], "the value's first bytes are shown")
			require.Contains(t, rec.Body.String(), "…", "cut short")
		})
	}
}
