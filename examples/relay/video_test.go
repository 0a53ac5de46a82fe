package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"
)

// post sends body to path on srv with the demo key.
func post(t *testing.T, srv *httptest.Server, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", contentType)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, data
}

// TestRelayRefusesInvalidVideosAtOnce: the relay's model list carries no
// video capabilities (the upstream's /v1/models does not give them), so
// it is the upstream that checks a video request. The relay creates each
// task upstream before it answers: a request the example server refuses
// is refused by the relay at once, with the same 400 in the flat shape,
// on JSON and multipart (the SDKs' encoding) and on the multimodal path,
// and no task is left behind.
func TestRelayRefusesInvalidVideosAtOnce(t *testing.T) {
	up := exampleServer(t)
	gw := relayTo(t, up.URL+"/v1")

	cases := []struct {
		name   string
		path   string
		fields map[string]any
		code   string
	}{
		{"BadSeconds", "/v1/videos", map[string]any{"model": "demo-video", "prompt": "a kite", "seconds": "5", "size": "1280x720"}, "invalid_request"},
		{"BadSize", "/v1/videos", map[string]any{"model": "demo-video", "prompt": "a kite", "seconds": "4", "size": "999x999"}, "invalid_request"},
		{"MissingSize", "/v1/videos", map[string]any{"model": "demo-video", "prompt": "a kite", "seconds": "4"}, "invalid_request"},
		{"UnknownModel", "/v1/videos", map[string]any{"model": "no-such-video", "prompt": "a kite", "seconds": "4", "size": "1280x720"}, "model_not_found"},
		{"MultimodalModeNotEnabled", "/v1/vendorai/videos", map[string]any{"model": "demo-video", "mode": "video_edit", "prompt": "a kite",
			"assets": []map[string]string{{"role": "source_video", "url": "https://example.com/a.mp4"}}}, "invalid_request"},
		{"MultimodalBadDuration", "/v1/vendorai/videos", map[string]any{"model": "demo-video", "mode": "t2v", "prompt": "a kite", "duration_sec": 5}, "invalid_request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			js, err := json.Marshal(tc.fields)
			require.NoError(t, err)
			type body struct {
				data        []byte
				contentType string
			}
			bodies := []body{{js, "application/json"}}
			if tc.path == "/v1/videos" {
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				for k, v := range tc.fields {
					require.NoError(t, mw.WriteField(k, v.(string)))
				}
				require.NoError(t, mw.Close())
				bodies = append(bodies, body{buf.Bytes(), mw.FormDataContentType()})
			}
			for _, b := range bodies {
				wantStatus, want := post(t, up, tc.path, b.contentType, b.data)
				require.Equal(t, http.StatusBadRequest, wantStatus, "the example server refuses it: %s", want)
				status, got := post(t, gw, tc.path, b.contentType, b.data)
				require.Equal(t, http.StatusBadRequest, status, "%s: %s", b.contentType, got)
				require.JSONEq(t, string(want), string(got), "%s: the upstream's 400, as it is", b.contentType)
				var flat struct{ Code string }
				require.NoError(t, json.Unmarshal(got, &flat))
				require.Equal(t, tc.code, flat.Code)
			}
		})
	}

	// The official SDK (multipart) sees the error at once, with its
	// message.
	client := sdk(gw, "sk-demo")
	_, err := client.Videos.New(t.Context(), openai.VideoNewParams{Model: "demo-video", Prompt: "a kite", Seconds: "4", Size: "999x999"})
	var apiErr *openai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	require.Contains(t, apiErr.Message, "999x999")

	// No task was created on either side.
	for _, srv := range []*httptest.Server{up, gw} {
		c := sdk(srv, "sk-demo")
		page, err := c.Videos.List(t.Context(), openai.VideoListParams{})
		require.NoError(t, err)
		require.Empty(t, page.Data, srv.URL)
	}
}
