package gatewaytest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway/gatewaytest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/responses"
)

// call sends body (GET when empty) to url with sk-demo, and returns the
// status and the reply.
func call(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, data
}

// TestNewDemoServesEveryFamily: the demo gateway answers every family of
// the API, and finishes a video task.
func TestNewDemoServesEveryFamily(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(gatewaytest.NewDemo(t, nil))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ name, path, body, want string }{
		{"chat", "/v1/chat/completions", `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`, `"chat.completion"`},
		{"completions", "/v1/completions", `{"model":"demo-instruct","prompt":"hi"}`, `"text_completion"`},
		{"responses", "/v1/responses", `{"model":"demo-chat","input":"hi"}`, `"object":"response"`},
		{"messages", "/v1/messages", `{"model":"demo-chat","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`, `"type":"message"`},
		{"embeddings", "/v1/embeddings", `{"model":"demo-embedding","input":"hi","dimensions":8}`, `"object":"embedding"`},
		{"moderations", "/v1/moderations", `{"model":"demo-moderation","input":"I will kill the bug"}`, `"violence":true`},
		{"rerank", "/v1/rerank", `{"model":"demo-rerank","query":"capital of France","documents":["Paris is the capital of France.","Cats sleep."]}`, `"index":0`},
		{"images", "/v1/images/generations", `{"model":"demo-image","prompt":"a kite","size":"256x256"}`, `"url":"/v1/images/files/`},
		{"speech", "/v1/audio/speech", `{"model":"demo-tts","input":"Hello.","voice":"alloy"}`, "RIFF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := call(t, http.MethodPost, srv.URL+tc.path, tc.body)
			require.Equal(t, http.StatusOK, status, "%s", body)
			require.Contains(t, string(body), tc.want)
		})
	}
	t.Run("video", func(t *testing.T) {
		t.Parallel()
		status, body := call(t, http.MethodPost, srv.URL+"/v1/videos", `{"model":"demo-video","prompt":"a kite","seconds":"4","size":"1280x720"}`)
		require.Equal(t, http.StatusOK, status, "%s", body)
		var task struct{ ID, Status string }
		require.NoError(t, json.Unmarshal(body, &task))
		for task.Status != "completed" { // the runner finishes the task
			require.NotEqual(t, "failed", task.Status, "%s", body)
			select {
			case <-t.Context().Done():
				t.Fatalf("the task is still %s", task.Status)
			case <-time.After(10 * time.Millisecond):
			}
			_, body = call(t, http.MethodGet, srv.URL+"/v1/videos/"+task.ID, "")
			require.NoError(t, json.Unmarshal(body, &task))
		}
		status, body = call(t, http.MethodGet, srv.URL+"/v1/videos/"+task.ID+"/content", "")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "ftyp", string(body[4:8]), "an MP4 file")
	})
}

// TestNewDemoServesARelay: a relay in front of the demo gateway serves
// responses as well as chat.
func TestNewDemoServesARelay(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(gatewaytest.NewDemo(t, nil))
	t.Cleanup(up.Close)
	r, err := relay.New([]relay.Route{{Model: "demo-chat", Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: "sk-demo"}}}})
	require.NoError(t, err)
	catalog := models.NewMemoryCatalog(models.Model{ID: "demo-chat", EndpointTypes: []models.EndpointType{models.Compat, models.CompatResponse}})
	mux := http.NewServeMux()
	responses.Register(mux, responses.NewHandler(catalog, r.Responses()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	status, body := call(t, http.MethodPost, srv.URL+"/v1/responses", `{"model":"demo-chat","input":"hi","store":false}`)
	require.Equal(t, http.StatusOK, status, "%s", body)
	require.Contains(t, string(body), `"status":"completed"`)
}
