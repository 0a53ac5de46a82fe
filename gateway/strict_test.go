package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// strictCase is one JSON body that every family must refuse, with the
// message and param (where the family's shape has one) of the refusal.
type strictCase struct {
	name, path, body string
	message, param   string
}

// TestEveryJSONBodyIsOneObjectWithEachMemberOnce checks the rule of
// package httpjson on every JSON access point of the gateway: a member
// given twice, at any depth, and a body that is null rather than an
// object, are a 400 in the family's shape, naming the member.
func TestEveryJSONBodyIsOneObjectWithEachMemberOnce(t *testing.T) {
	t.Parallel()
	g := newDemo(t, withAccessDemo)
	const (
		twice = "model must appear once in the request body"
		null  = "request body must be a JSON object, got null"
	)
	const gemini = "/v1beta/models/demo-chat:generateContent?key=sk-demo"
	var tests []strictCase
	for _, ep := range []struct{ path, body string }{
		{"/v1/chat/completions", `"messages":[{"role":"user","content":"hi"}]`},
		{"/v1/completions", `"prompt":"hi"`},
		{"/v1/responses", `"input":"hi"`},
		{"/v1/responses/compact", `"input":"hi"`},
		{"/v1/messages", `"max_tokens":64,"messages":[{"role":"user","content":"hi"}]`},
		{"/v1/embeddings", `"input":"hi"`},
		{"/v1/moderations", `"input":"hi"`},
		{"/v1/rerank", `"query":"q","documents":["a","b"]`},
		{"/v1/images/generations", `"prompt":"a kite"`},
		{"/v1/audio/speech", `"input":"hi","voice":"alloy"`},
		{"/v1/videos", `"prompt":"a kite","seconds":"4","size":"1280x720"`},
		{"/v1/vendorai/videos", `"prompt":"a kite","seconds":4`},
	} {
		model := map[string]string{
			"/v1/completions": "demo-instruct", "/v1/embeddings": "demo-embedding", "/v1/moderations": "demo-moderation",
			"/v1/rerank": "demo-rerank", "/v1/images/generations": "demo-image", "/v1/audio/speech": "demo-tts",
			"/v1/videos": "demo-video", "/v1/vendorai/videos": "demo-video",
		}[ep.path]
		if model == "" {
			model = "demo-chat"
		}
		other := "demo-reasoner"
		tests = append(tests,
			strictCase{"ModelTwice" + ep.path, ep.path, `{"model":"` + model + `",` + ep.body + `,"model":"` + other + `"}`, twice, "model"},
			strictCase{"ModelTwiceFolded" + ep.path, ep.path, `{"model":"` + model + `",` + ep.body + `,"MODEL":"` + other + `"}`, twice, "model"},
			strictCase{"UnknownMemberTwice" + ep.path, ep.path, `{"model":"` + model + `",` + ep.body + `,"x":{"y":1,"y":2}}`, "x.y must appear once in the request body", "x.y"},
			strictCase{"Null" + ep.path, ep.path, `null`, null, ""},
		)
	}
	tests = append(tests,
		strictCase{"RoleTwice", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi","role":"system"}]}`,
			"messages[0].role must appear once in the request body", "messages[0].role"},
		strictCase{"SchemaMemberTwice", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","type":"array"}}}]}`,
			"tools[0].function.parameters.type must appear once in the request body", "tools[0].function.parameters.type"},
		strictCase{"ExtraTwice", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}],"user":"a","user":"b"}`,
			"user must appear once in the request body", "user"},
		strictCase{"MessagesRoleTwice", "/v1/messages", `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hi","role":"assistant"}]}`,
			"messages[0].role must appear once in the request body", "messages[0].role"},
		strictCase{"GeminiContentsTwice", gemini, `{"contents":[{"parts":[{"text":"hi"}]}],"contents":[]}`,
			"contents must appear once in the request body", "contents"},
		strictCase{"GeminiPartTwice", gemini, `{"contents":[{"parts":[{"text":"hi","TEXT":"ho"}]}]}`,
			"contents[0].parts[0].text must appear once in the request body", "contents[0].parts[0].text"},
		strictCase{"GeminiNull", gemini, `null`, null, ""},
		strictCase{"GeminiSnakeCaseTwice", gemini, `{"contents":[{"parts":[{"text":"hi"}]}],"generation_config":{"top_k":1},"generation_config":{"top_k":2}}`,
			"generation_config must appear once in the request body", "generation_config"},
		strictCase{"GeminiBothSpellings", gemini, `{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"max_output_tokens":9,"maxOutputTokens":5}}`,
			"generationConfig.maxOutputTokens must appear once in the request body", "generationConfig.maxOutputTokens"},
	)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := do(t, g, http.MethodPost, tc.path, "sk-demo", tc.body)
			require.Equal(t, http.StatusBadRequest, status, "%s", body)
			message, param, hasParam := errorOf(t, tc.path, body)
			require.Equal(t, tc.message, message, "%s", body)
			if hasParam {
				require.Equal(t, tc.param, param, "%s", body)
			}
		})
	}
}

// errorOf reads the message of an error in the shape of path's family,
// and its param where the shape has one.
func errorOf(t *testing.T, path, body string) (message, param string, hasParam bool) {
	t.Helper()
	var v struct {
		Type    string `json:"type"`
		Message string `json:"message"` // the flat shape of video creation
		Error   struct {
			Message string  `json:"message"`
			Param   *string `json:"param"`
			Status  string  `json:"status"` // Google's
			Type    string  `json:"type"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	switch {
	case path == "/v1/messages":
		require.Equal(t, "error", v.Type, "the messages envelope: %s", body)
		require.Equal(t, "invalid_request_error", v.Error.Type)
	case path[:8] == "/v1beta/":
		require.Equal(t, "INVALID_ARGUMENT", v.Error.Status, "Google's error object: %s", body)
	case path == "/v1/videos" || path == "/v1/vendorai/videos":
		require.Equal(t, v.Error.Message, v.Message, "the flat shape: %s", body)
		return v.Error.Message, "", false
	default:
		require.Equal(t, "invalid_request_error", v.Error.Type, "%s", body)
		p := ""
		if v.Error.Param != nil {
			p = *v.Error.Param
		}
		return v.Error.Message, p, true
	}
	return v.Error.Message, "", false
}
