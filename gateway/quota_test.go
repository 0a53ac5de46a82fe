package gateway_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/telemetry"
	"github.com/gatewaykit/gatewaykit/videos"
)

// everyRoute is every route that the gateway mounts with every family
// and a relay.
func everyRoute() []string {
	routes := []string{chat.Pattern, completions.Pattern, images.PatternFile, videos.PatternContent,
		models.Pattern, models.PatternModel, models.PatternBeta, models.PatternBetaModel}
	routes = append(routes, responses.Patterns()...)
	routes = append(routes, videos.Patterns()...)
	return append(routes, relay.AccessPatterns()...)
}

// TestASpentKeyKeepsWhatItPaidFor: a key whose quota (sk-demo-empty) or
// budget in money (sk-demo-spent) is spent is refused, with 403
// insufficient_quota in the family's shape, on every route that spends,
// and reads and deletes what its account owns on every other route as a
// key with quota would (200, or 404 for what does not exist). The table
// covers every route of the gateway.
func TestASpentKeyKeepsWhatItPaidFor(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"sk-demo-empty", "sk-demo-spent"} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			b := newOutageBundle(t)
			// What the account owns besides the video task: a stored
			// response and an image file, made with sk-demo.
			status, body := do(t, b.g, "POST", "/v1/responses", "sk-demo", `{"model":"demo-chat","input":"hi"}`)
			require.Equal(t, 200, status, body)
			var resp struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(body), &resp))
			status, body = do(t, b.g, "POST", "/v1/images/generations", "sk-demo", `{"model":"demo-image","prompt":"hi","size":"16x16"}`)
			require.Equal(t, 200, status, body)
			var img struct{ Data []struct{ URL string } }
			require.NoError(t, json.Unmarshal([]byte(body), &img))
			expand := strings.NewReplacer("{task}", b.task, "{resp}", resp.ID, "{image}", img.Data[0].URL).Replace

			transcription, transcriptionType := multipartBody(t, "demo-whisper")
			remoteTranscription, remoteTranscriptionType := multipartBody(t, "remote-whisper")
			messages := map[string]string{"x-api-key": key, "anthropic-version": "2023-06-01"}
			goog := map[string]string{"x-goog-api-key": key}
			multipartOf := func(ct string) map[string]string { return map[string]string{"Content-Type": ct} }
			video := `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`
			tests := []struct {
				name, method, path, body string
				header                   map[string]string
				want                     int
			}{
				// Spending: generation and creation.
				{"chat", "POST", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, nil, 403},
				{"completions", "POST", "/v1/completions", `{"model":"demo-instruct","prompt":"hi"}`, nil, 403},
				{"responses", "POST", "/v1/responses", `{"model":"demo-chat","input":"hi"}`, nil, 403},
				{"responses compact", "POST", "/v1/responses/compact", `{"model":"demo-chat","input":"hi"}`, nil, 403},
				{"messages", "POST", "/v1/messages", `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, messages, 403},
				{"relayed messages", "POST", "/v1/messages", `{"model":"remote-claude","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, messages, 403},
				{"gemini", "POST", "/v1beta/models/demo-chat:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`, goog, 403},
				{"gemini stream", "POST", "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", `{"contents":[{"parts":[{"text":"hi"}]}]}`, goog, 403},
				{"relayed gemini", "POST", "/v1beta/models/remote-gemini:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`, goog, 403},
				{"embeddings", "POST", "/v1/embeddings", `{"model":"demo-embedding","input":"hi"}`, nil, 403},
				{"relayed embeddings", "POST", "/v1/embeddings", `{"model":"remote-embed","input":"hi"}`, nil, 403},
				{"moderations", "POST", "/v1/moderations", `{"model":"demo-moderation","input":"hi"}`, nil, 403},
				{"rerank", "POST", "/v1/rerank", `{"model":"demo-rerank","query":"hi","documents":["hi"]}`, nil, 403},
				{"images", "POST", "/v1/images/generations", `{"model":"demo-image","prompt":"hi","size":"16x16"}`, nil, 403},
				{"speech", "POST", "/v1/audio/speech", `{"model":"demo-tts","input":"hi","voice":"alloy"}`, nil, 403},
				{"transcription", "POST", "/v1/audio/transcriptions", transcription, multipartOf(transcriptionType), 403},
				{"translation", "POST", "/v1/audio/translations", transcription, multipartOf(transcriptionType), 403},
				{"relayed transcription", "POST", "/v1/audio/transcriptions", remoteTranscription, multipartOf(remoteTranscriptionType), 403},
				{"video create", "POST", "/v1/videos", video, nil, 403},
				{"video create multimodal", "POST", "/v1/vendorai/videos", `{"model":"demo-video-pro","mode":"t2v","prompt":"kite"}`, nil, 403},
				{"video create alias", "POST", "/v1/vendor/videos", `{"model":"demo-video-pro","mode":"t2v","prompt":"kite"}`, nil, 403},

				// Reading what the account owns.
				{"model list", "GET", "/v1/models", "", nil, 200},
				{"model", "GET", "/v1/models/demo-chat", "", nil, 200},
				{"gemini model list", "GET", "/v1beta/models", "", goog, 200},
				{"gemini model", "GET", "/v1beta/models/demo-chat", "", goog, 200},
				{"task list", "GET", "/v1/videos", "", nil, 200},
				{"task status", "GET", "/v1/videos/{task}", "", nil, 200},
				{"unknown task", "GET", "/v1/videos/task_0123456789abcdefghijklmnopqrstuv", "", nil, 404},
				{"content", "GET", "/v1/videos/{task}/content", "", nil, 200},
				{"content by HEAD", "HEAD", "/v1/videos/{task}/content", "", nil, 200},
				{"missing thumbnail", "GET", "/v1/videos/{task}/content?variant=thumbnail", "", nil, 404},
				{"stored response", "GET", "/v1/responses/{resp}", "", nil, 200},
				{"input items", "GET", "/v1/responses/{resp}/input_items", "", nil, 200},
				{"cancel a foreground response", "POST", "/v1/responses/{resp}/cancel", "", nil, 400},
				{"image file", "GET", "{image}", "", nil, 200},
				{"delete response", "DELETE", "/v1/responses/{resp}", "", nil, 200},
				{"delete task", "DELETE", "/v1/videos/{task}", "", nil, 200},
			}
			covered := map[string]bool{}
			for _, tc := range tests { // in order: the deletions last
				req := httptest.NewRequest(tc.method, expand(tc.path), strings.NewReader(tc.body))
				if tc.header["x-api-key"] == "" && tc.header["x-goog-api-key"] == "" {
					req.Header.Set("Authorization", "Bearer "+key)
				}
				if tc.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				info := new(telemetry.Info)
				req = req.WithContext(telemetry.NewContext(req.Context(), info))
				rec := httptest.NewRecorder()
				b.g.ServeHTTP(rec, req)
				covered[info.Route] = true

				require.Equal(t, tc.want, rec.Code, "%s: %s", tc.name, rec.Body)
				if tc.want == http.StatusForbidden {
					require.Contains(t, rec.Body.String(), "You exceeded the", "%s: the middleware's message", tc.name)
					require.Equal(t, "key-"+strings.TrimPrefix(key, "sk-"), info.KeyID, tc.name)
				}
			}
			require.Empty(t, cmpRoutes(everyRoute(), slices.Collect(maps.Keys(covered))), "routes the table misses")
		})
	}
}

// cmpRoutes returns the routes of want that got lacks.
func cmpRoutes(want, got []string) []string {
	var missing []string
	for _, r := range want {
		if !slices.Contains(got, r) {
			missing = append(missing, r)
		}
	}
	return missing
}
