package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/relay"
)

// TestGatewayServesTheGeminiStyle checks that the model the Gemini-style
// list advertises for generateContent answers it, with ?key= and with
// x-goog-api-key, in both stream forms, and that a gateway without a chat
// backend leaves the paths unrouted (a 405 in Google's error object: only
// the model's GET is routed there).
func TestGatewayServesTheGeminiStyle(t *testing.T) {
	t.Parallel()
	g := newDemo(t, nil)
	status, body := do(t, g, "GET", "/v1beta/models?key=sk-demo", "", "")
	require.Equal(t, 200, status, body)
	var list struct {
		Models []struct {
			Name                       string   `json:"name"`
			SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
		} `json:"models"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	var advertised []string
	for _, m := range list.Models {
		for _, method := range m.SupportedGenerationMethods {
			if method == "generateContent" {
				advertised = append(advertised, strings.TrimPrefix(m.Name, "models/"))
			}
		}
	}
	require.Contains(t, advertised, "demo-chat")
	req := `{"contents":[{"parts":[{"text":"hello"}]}]}`
	for _, model := range advertised {
		for _, path := range []string{":generateContent?key=sk-demo", ":streamGenerateContent?alt=sse&key=sk-demo", ":streamGenerateContent?key=sk-demo"} {
			r := httptest.NewRequest("POST", "/v1beta/models/"+model+path, strings.NewReader(req))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			require.Equal(t, 200, w.Code, "%s%s: %s", model, path, w.Body.String())
			require.Contains(t, w.Body.String(), `"finishReason":"STOP"`)
		}
	}
	r := httptest.NewRequest("POST", "/v1beta/models/demo-chat:generateContent", strings.NewReader(req))
	r.Header.Set("x-goog-api-key", "sk-demo")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())

	bare := newDemo(t, func(c *gateway.Config) { c.Chat = nil })
	status, body = do(t, bare, "POST", "/v1beta/models/demo-chat:generateContent?key=sk-demo", "", req)
	require.Equal(t, 405, status, body) // GET /v1beta/models/{model} is the only route there
	require.Contains(t, body, `"code":405`)
}

// TestRoutesReplaceTheServedAccessPoint checks that an access point that
// Config.Routes mounts (as examples/relay mounts the relay's) takes the
// place of the one the gateway serves over its chat backend.
func TestRoutesReplaceTheServedAccessPoint(t *testing.T) {
	t.Parallel()
	g := newDemo(t, func(c *gateway.Config) {
		c.Routes = func(mux *http.ServeMux) {
			mux.Handle(relay.PatternGemini, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusTeapot)
			}))
		}
	})
	status, body := do(t, g, "POST", "/v1beta/models/demo-chat:generateContent?key=sk-demo", "", `{"contents":[{"parts":[{"text":"hi"}]}]}`)
	require.Equal(t, http.StatusTeapot, status, body)
}

// TestTheGeminiModelListAnswersErrorsInGooglesObject checks that every
// error under /v1beta/models, the auth middleware's and the model list's
// own, comes in Google's error object, and that /v1/models keeps the
// general shape whatever the credentials choose as the list's format.
func TestTheGeminiModelListAnswersErrorsInGooglesObject(t *testing.T) {
	t.Parallel()
	g := newDemo(t, nil)
	for _, tc := range []struct {
		name, target string
		status       int
		google       bool
	}{
		{"MissingKey", "/v1beta/models", 401, true},
		{"BadPageSize", "/v1beta/models?key=sk-demo&pageSize=-1", 400, true},
		{"BadPageToken", "/v1beta/models?key=sk-demo&pageToken=%21", 400, true},
		{"UnknownModel", "/v1beta/models/no-such-model?key=sk-demo", 404, true},
		{"UnknownModelOnV1ByKey", "/v1/models/no-such-model?key=sk-demo", 404, false},
		{"BadPageSizeOnV1ByKey", "/v1/models?key=sk-demo&pageSize=-1", 400, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := do(t, g, "GET", tc.target, "", "")
			require.Equal(t, tc.status, status, body)
			var v struct {
				Error struct {
					Code   any    `json:"code"`
					Status string `json:"status"`
					Type   string `json:"type"`
				} `json:"error"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &v), body)
			if tc.google {
				require.EqualValues(t, tc.status, v.Error.Code, "Google's error object: %s", body)
				require.NotEmpty(t, v.Error.Status, body)
				require.Empty(t, v.Error.Type, body)
				return
			}
			require.IsType(t, "", v.Error.Code, "the general shape: %s", body)
			require.NotEmpty(t, v.Error.Type, body)
		})
	}
}
